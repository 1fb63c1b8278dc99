import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf, bearerSecurity, scopeOf, type Guards } from '../../http/auth.js'
import { PERMISSIONS, roleMay } from '../../http/permissions.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { forbidden } from '../../lib/errors.js'
import {
  Action,
  ActionCreate,
  ActionList,
  ActionParams,
  ActionUpdate,
  CallList,
  CallListQuery,
  ImportRequest,
  SigningSecret,
  SigningSecretStatus,
  TestRequest,
  TestResponse,
} from './actions.schemas.js'
import type { ActionsService } from './actions.service.js'

/** Actions (contract section "Actions"): owners and admins manage them; editors read and dry-run them. */
export const actionsRoutes =
  (deps: { guards: Guards; actions: ActionsService; onClose?: () => Promise<void> }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, actions } = deps
    if (deps.onClose) app.addHook('onClose', deps.onClose)
    const base = { tags: ['actions'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const manage = { preHandler: guards.can('actions') }
    const test = { preHandler: guards.can('actions_test') }

    app.get('/actions', { ...test, schema: { ...base, operationId: 'listActions', response: { 200: ActionList, ...errors } } }, async (req) => ({
      items: await actions.list(req.tenantId!, scopeOf(req)),
    }))

    app.post(
      '/actions',
      {
        ...manage,
        schema: {
          ...base,
          operationId: 'createAction',
          description:
            'Secrets are given as plain values and never shown again (masks only). 422 names the field: a bad name, a parameter schema that is no JSON Schema, a template naming an unknown parameter, a relative URL on an enabled action.',
          body: ActionCreate,
          response: { 201: Action, 409: ErrorBody, ...errors },
        },
      },
      async (req, reply) => reply.code(201).send(await actions.create(req.tenantId!, req.body as never, actorOf(req))),
    )

    app.post(
      '/actions/import-openapi',
      {
        ...manage,
        schema: {
          ...base,
          operationId: 'importOpenApiActions',
          description:
            'One disabled action per operation (all, or those named in operations). A relative or missing server URL is joined to base_url, else kept relative (such an action cannot be enabled until its URL is absolute). 422 with the document’s problems.',
          body: ImportRequest,
          response: { 201: ActionList, 409: ErrorBody, ...errors },
        },
      },
      async (req, reply) => reply.code(201).send(await actions.importOpenApi(req.tenantId!, req.body, actorOf(req))),
    )

    app.get(
      '/actions/signing-secret',
      { ...manage, schema: { ...base, operationId: 'getActionSigningSecret', response: { 200: SigningSecretStatus, ...errors } } },
      async (req) => actions.secretStatus(req.tenantId!),
    )

    app.post(
      '/actions/signing-secret',
      {
        ...manage,
        schema: {
          ...base,
          operationId: 'rotateActionSigningSecret',
          description:
            'A new workspace action secret (whsec_...), shown only here. Every outbound call is signed with it (Standard Webhooks headers) and its X-Visitor-Token is an HS256 JWT under its decoded key. The previous secret stops signing at once.',
          response: { 200: SigningSecret, ...errors },
        },
      },
      async (req) => actions.rotateSecret(req.tenantId!, actorOf(req)),
    )

    app.get(
      '/actions/:id',
      { ...test, schema: { ...base, operationId: 'getAction', params: ActionParams, response: { 200: Action, ...errors } } },
      async (req) => actions.get(req.tenantId!, req.params.id, scopeOf(req)),
    )

    app.patch(
      '/actions/:id',
      {
        ...manage,
        schema: {
          ...base,
          operationId: 'updateAction',
          description: 'A partial update; secrets given replace those of the same name, the others are kept.',
          params: ActionParams,
          body: ActionUpdate,
          response: { 200: Action, 409: ErrorBody, ...errors },
        },
      },
      async (req) => actions.update(req.tenantId!, req.params.id, req.body as never, actorOf(req)),
    )

    app.delete(
      '/actions/:id',
      { ...manage, schema: { ...base, operationId: 'deleteAction', params: ActionParams, response: { 204: Type.Null(), ...errors } } },
      async (req, reply) => {
        await actions.remove(req.tenantId!, req.params.id, actorOf(req))
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/actions/:id/test',
      {
        ...test,
        schema: {
          ...base,
          operationId: 'testAction',
          description:
            'The request the action would send for these arguments and visitor claims, secrets masked. Nothing is sent unless live is true (owners and admins; the call is logged).',
          params: ActionParams,
          body: TestRequest,
          response: { 200: TestResponse, ...errors },
        },
      },
      async (req) => {
        const role = req.member!.role
        if (req.body.live && !roleMay(role, 'actions')) throw forbidden(`Your role (${role}) may not ${PERMISSIONS.actions.what}`)
        return actions.test(req.tenantId!, req.params.id, req.body, scopeOf(req))
      },
    )

    app.get(
      '/actions/:id/calls',
      {
        ...test,
        schema: {
          ...base,
          operationId: 'listActionCalls',
          description: 'Newest first; arguments redacted (visitor values named, not shown). Pass next_cursor as cursor for the next page.',
          params: ActionParams,
          querystring: CallListQuery,
          response: { 200: CallList, ...errors },
        },
      },
      async (req) => actions.calls(req.tenantId!, req.params.id, req.query, scopeOf(req)),
    )
  }
