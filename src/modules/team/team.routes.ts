import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { actorOf, bearerSecurity, type Guards } from '../../http/auth.js'
import { rateLimits } from '../../http/rate-limit.js'
import { ErrorBody, RateLimitBody, commonErrors } from '../../http/schemas.js'
import { AuthResponse } from '../auth/auth.schemas.js'
import { AUTH_COOKIE, JWT_TTL_SECONDS } from '../auth/jwt.js'
import {
  AcceptInvitationRequest,
  CreateInvitationRequest,
  Invitation,
  InvitationList,
  InvitationParams,
  Member,
  MemberList,
  MemberParams,
  TransferOwnershipRequest,
  TransferOwnershipResponse,
  UpdateMemberRequest,
} from './team.schemas.js'
import type { TeamService } from './team.service.js'

export const teamRoutes =
  (deps: { guards: Guards; team: TeamService; secureCookies: boolean }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, team } = deps
    const base = { tags: ['team'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }

    app.get(
      '/tenants/me/members',
      {
        preHandler: guards.can('member'),
        schema: {
          ...base,
          operationId: 'listMembers',
          description: 'Every member of the workspace with role, bots (null: all) and last activity. Readable by every role (the inbox names assignees).',
          response: { 200: MemberList, ...errors },
        },
      },
      (req) => team.listMembers(req.tenantId!),
    )

    app.patch(
      '/tenants/me/members/:user_id',
      {
        preHandler: guards.can('members'),
        schema: {
          ...base,
          operationId: 'updateMember',
          description:
            "Changes a member's role, bots or can_view_original; applies on the member's next request. Only an owner changes an owner or makes one; 409 when no owner would be left.",
          params: MemberParams,
          body: UpdateMemberRequest,
          response: { 200: Member, 409: ErrorBody, ...errors },
        },
      },
      (req) => team.updateMember(req.tenantId!, { ...actorOf(req), role: req.member!.role }, req.params.user_id, req.body),
    )

    app.delete(
      '/tenants/me/members/:user_id',
      {
        preHandler: guards.can('members'),
        schema: {
          ...base,
          operationId: 'removeMember',
          description:
            'Removes the member: its sessions end at once and its tickets are unassigned. 403 for oneself; only an owner removes an owner; 409 for the last owner.',
          params: MemberParams,
          response: { 204: Type.Null(), 409: ErrorBody, ...errors },
        },
      },
      async (req, reply) => {
        await team.removeMember(req.tenantId!, { ...actorOf(req), role: req.member!.role }, req.params.user_id)
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/tenants/me/invitations',
      {
        preHandler: guards.can('members'),
        config: { rateLimit: rateLimits.invitations },
        schema: {
          ...base,
          operationId: 'createInvitation',
          description: `Invites an address with a role (and optional bots): mails a single-use link to the dashboard page /accept-invitation, valid 7 days. An earlier pending invitation to the address is revoked. 409 when the address already has a workspace. Sending and resending together: ${rateLimits.invitations.max} an hour per workspace (429 with Retry-After beyond).`,
          body: CreateInvitationRequest,
          response: { 201: Invitation, 409: ErrorBody, 429: RateLimitBody, ...errors },
        },
      },
      async (req, reply) => reply.code(201).send(await team.invite(req.tenantId!, { ...actorOf(req), role: req.member!.role }, req.body)),
    )

    app.get(
      '/tenants/me/invitations',
      {
        preHandler: guards.can('members'),
        schema: {
          ...base,
          operationId: 'listInvitations',
          description: 'Pending, accepted, revoked and expired invitations, newest first.',
          response: { 200: InvitationList, ...errors },
        },
      },
      (req) => team.listInvitations(req.tenantId!),
    )

    app.delete(
      '/tenants/me/invitations/:id',
      {
        preHandler: guards.can('members'),
        schema: {
          ...base,
          operationId: 'revokeInvitation',
          description: 'Revokes a pending invitation: its link stops working. 409 when it was already accepted.',
          params: InvitationParams,
          response: { 204: Type.Null(), 409: ErrorBody, ...errors },
        },
      },
      async (req, reply) => {
        await team.revokeInvitation(req.tenantId!, actorOf(req), req.params.id)
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/tenants/me/invitations/:id/resend',
      {
        preHandler: guards.can('members'),
        config: { rateLimit: rateLimits.invitations },
        schema: {
          ...base,
          operationId: 'resendInvitation',
          description: `Mails a new link, valid 7 days from now (the earlier link stops working). 409 for a revoked or accepted invitation. Counts with sending toward ${rateLimits.invitations.max} an hour per workspace (429 with Retry-After beyond).`,
          params: InvitationParams,
          response: { 200: Invitation, 409: ErrorBody, 429: RateLimitBody, ...errors },
        },
      },
      (req) => team.resendInvitation(req.tenantId!, actorOf(req), req.params.id),
    )

    app.post(
      '/tenants/me/transfer-ownership',
      {
        preHandler: guards.can('workspace'),
        schema: {
          ...base,
          operationId: 'transferOwnership',
          description: 'The owner names an admin, who becomes owner; the caller becomes admin. 400 when the member is not an admin.',
          body: TransferOwnershipRequest,
          response: { 200: TransferOwnershipResponse, 400: ErrorBody, ...errors },
        },
      },
      (req) => team.transferOwnership(req.tenantId!, actorOf(req), req.body.user_id),
    )

    const cookieOptions = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: deps.secureCookies }
    /** A signed-in caller, if any: accepting with an existing account's session instead of its password. */
    async function sessionUser(req: FastifyRequest) {
      if (!req.headers.authorization && !req.cookies?.[AUTH_COOKIE]) return null
      try {
        await guards.user(req)
        return req.authUser
      } catch {
        return null
      }
    }

    app.post(
      '/auth/accept-invitation',
      {
        config: { rateLimit: rateLimits.login },
        schema: {
          tags: ['auth'],
          operationId: 'acceptInvitation',
          description:
            "Joins the invitation's workspace. Without an account for the invited address: password is required and becomes the new account's. With one: the caller is signed in as that address, or gives its password. Only the invited address can accept (403 wrong_address). 400 for an expired, used or revoked invitation. Answers like login (and sets the session cookie).",
          body: AcceptInvitationRequest,
          response: { 200: AuthResponse, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 409: ErrorBody, 422: commonErrors[422], 429: RateLimitBody },
        },
      },
      async (req, reply) => {
        const user = await sessionUser(req)
        const body = await team.accept(req.body.token, { password: req.body.password, sessionUser: user, ip: req.ip })
        reply.setCookie(AUTH_COOKIE, body.token, { ...cookieOptions, maxAge: JWT_TTL_SECONDS })
        return body
      },
    )
  }
