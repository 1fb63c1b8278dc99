import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { bearerSecurity, scopeOf, type Guards } from '../../http/auth.js'
import { rateLimits } from '../../http/rate-limit.js'
import { ErrorBody, RateLimitBody, commonErrors } from '../../http/schemas.js'
import {
  AuthResponse,
  ForgotPasswordRequest,
  LoginRequest,
  MessageResponse,
  RegisterRequest,
  RegisterResponse,
  ResetPasswordRequest,
  UpdateMeRequest,
  UserResponse,
  VerifyEmailRequest,
  VerifyEmailResponse,
  WidgetTokenQuery,
  WidgetTokenResponse,
} from './auth.schemas.js'
import { presentUser, type AuthService } from './auth.service.js'
import { AUTH_COOKIE, JWT_TTL_SECONDS } from './jwt.js'

export const authRoutes =
  (deps: { guards: Guards; auth: AuthService; secureCookies: boolean }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, auth } = deps
    const tags = ['auth']
    const cookieOptions = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: deps.secureCookies }
    const setCookie = (reply: FastifyReply, token: string) => reply.setCookie(AUTH_COOKIE, token, { ...cookieOptions, maxAge: JWT_TTL_SECONDS })

    app.post(
      '/auth/register',
      {
        config: { rateLimit: rateLimits.register },
        schema: {
          tags,
          operationId: 'register',
          body: RegisterRequest,
          response: { 200: RegisterResponse, 409: ErrorBody, 422: commonErrors[422], 429: RateLimitBody },
        },
      },
      (req) => auth.register(req.body.email, req.body.password),
    )

    app.post(
      '/auth/login',
      {
        config: { rateLimit: rateLimits.login },
        schema: {
          tags,
          operationId: 'login',
          body: LoginRequest,
          response: { 200: AuthResponse, 401: ErrorBody, 404: ErrorBody, 422: commonErrors[422], 429: RateLimitBody },
        },
      },
      async (req, reply) => {
        const body = await auth.login(req.body.email, req.body.password, req.ip)
        setCookie(reply, body.token)
        return body
      },
    )

    app.post(
      '/auth/verify-email',
      {
        schema: { tags, operationId: 'verifyEmail', body: VerifyEmailRequest, response: { 200: VerifyEmailResponse, 400: ErrorBody, 422: commonErrors[422] } },
      },
      async (req, reply) => {
        const body = await auth.verifyEmail(req.body.token)
        setCookie(reply, body.token)
        return body
      },
    )

    app.post(
      '/auth/forgot-password',
      {
        config: { rateLimit: rateLimits.forgotPassword },
        schema: {
          tags,
          operationId: 'forgotPassword',
          body: ForgotPasswordRequest,
          response: { 200: MessageResponse, 422: commonErrors[422], 429: RateLimitBody },
        },
      },
      (req) => auth.forgotPassword(req.body.email),
    )

    app.post(
      '/auth/reset-password',
      {
        config: { rateLimit: rateLimits.resetPassword },
        schema: {
          tags,
          operationId: 'resetPassword',
          body: ResetPasswordRequest,
          response: { 200: MessageResponse, 400: ErrorBody, 422: commonErrors[422], 429: RateLimitBody },
        },
      },
      (req) => auth.resetPassword(req.body.token, req.body.new_password),
    )

    app.get(
      '/auth/me/widget-token',
      {
        preHandler: guards.can('member'),
        schema: {
          tags,
          security: bearerSecurity,
          operationId: 'getWidgetToken',
          querystring: WidgetTokenQuery,
          response: { 200: WidgetTokenResponse, 400: ErrorBody, 404: ErrorBody, ...commonErrors },
        },
      },
      (req) => auth.widgetToken(req.authUser!, req.query.bot_id || undefined, scopeOf(req)),
    )

    app.post('/auth/logout', { schema: { tags, operationId: 'logout', response: { 200: MessageResponse } } }, async (_req, reply) => {
      reply.clearCookie(AUTH_COOKIE, cookieOptions)
      return { message: 'Logged out' }
    })

    app.get(
      '/auth/me',
      {
        preHandler: guards.user,
        schema: {
          tags,
          security: bearerSecurity,
          operationId: 'getMe',
          description: "The caller, with its role in its workspace, the bots it is limited to (null: all) and its role's permissions.",
          response: { 200: UserResponse, 401: ErrorBody },
        },
      },
      async (req) => presentUser(req.authUser!),
    )

    app.patch(
      '/auth/me',
      {
        preHandler: guards.user,
        schema: {
          tags,
          security: bearerSecurity,
          operationId: 'updateMe',
          description: "The caller's own preferences: notify_on_assignment (a mail when someone else assigns a ticket to me).",
          body: UpdateMeRequest,
          response: { 200: UserResponse, 401: ErrorBody, 422: commonErrors[422] },
        },
      },
      (req) => auth.updateMe(req.authUser!.id, req.body),
    )
  }
