import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { commonErrors, ErrorBody } from '../../http/schemas.js'
import { SavedReply, SavedReplyCreate, SavedReplyList, SavedReplyParams, SavedReplyPatch } from './saved-replies.schemas.js'
import type { SavedRepliesService } from './saved-replies.service.js'

/** /tenants/me/saved-replies: agents (and everyone who manages them) read; owners, admins and editors manage. */
export const savedRepliesRoutes =
  (deps: { guards: Guards; savedReplies: SavedRepliesService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, savedReplies } = deps
    const base = { tags: ['inbox'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const manage = { preHandler: guards.can('saved_replies') }

    app.get(
      '/tenants/me/saved-replies',
      {
        preHandler: guards.can('saved_replies_read'),
        schema: {
          ...base,
          operationId: 'listSavedReplies',
          description: "The workspace's saved replies, by shortcut.",
          response: { 200: SavedReplyList, ...errors },
        },
      },
      (req) => savedReplies.list(req.tenantId!),
    )

    app.post(
      '/tenants/me/saved-replies',
      {
        ...manage,
        schema: {
          ...base,
          operationId: 'createSavedReply',
          description: 'A new saved reply. 409 shortcut_exists when the shortcut is taken; 422 naming the field for a bad title, content or shortcut.',
          body: SavedReplyCreate,
          response: { 201: SavedReply, 409: ErrorBody, ...errors },
        },
      },
      async (req, reply) => reply.code(201).send(await savedReplies.create(req.tenantId!, req.body, req.authUser?.id ?? null)),
    )

    app.patch(
      '/tenants/me/saved-replies/:id',
      {
        ...manage,
        schema: {
          ...base,
          operationId: 'updateSavedReply',
          params: SavedReplyParams,
          body: SavedReplyPatch,
          response: { 200: SavedReply, 409: ErrorBody, ...errors },
        },
      },
      (req) => savedReplies.update(req.tenantId!, req.params.id, req.body),
    )

    app.delete(
      '/tenants/me/saved-replies/:id',
      { ...manage, schema: { ...base, operationId: 'deleteSavedReply', params: SavedReplyParams, response: { 204: Type.Null(), ...errors } } },
      async (req, reply) => {
        await savedReplies.remove(req.tenantId!, req.params.id)
        return reply.code(204).send(null)
      },
    )
  }
