import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, viewerOf, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { AssistTicketParams, SuggestBody, SuggestResponse, SummaryResponse, WaitingDraftResponse } from './assist.schemas.js'
import type { AssistService } from './assist.service.js'

/** Operator assist on a ticket: who may post messages on it may ask (owners, admins, agents; not analysts). */
export const assistRoutes =
  (deps: { guards: Guards; assist: AssistService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, assist } = deps
    const base = { tags: ['live'], security: bearerSecurity, params: AssistTicketParams }
    const errors = { ...commonErrors, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 503: ErrorBody }
    const pre = { preHandler: guards.can('tickets') }

    app.post(
      '/escalations/:id/suggest',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'suggestEscalationReply',
          summary: 'A suggested reply for the person on the ticket',
          description:
            "Written by the workspace's model from the conversation and the bot's own retrieval, cited like the bot's answers, in the visitor's language; never sent by itself (post it with `suggestion_id` to count it as used). 409 `stale` when a message arrived in the conversation while it was written.",
          body: SuggestBody,
          response: { 200: SuggestResponse, ...errors },
        },
      },
      async (req) => assist.suggest(req.tenantId!, req.params.id, req.body ?? {}, viewerOf(req)),
    )

    app.get(
      '/escalations/:id/draft',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'getEscalationDraft',
          summary: "The bot's unsent draft waiting on the ticket",
          description:
            "An e-mail bot in `mode: draft` does not send its answer: it waits here, in POST /escalations/{id}/suggest's shape, for a person to insert, edit and send (post it with `suggestion_id`). `draft` is null when there is none or it was used.",
          response: { 200: WaitingDraftResponse, ...errors },
        },
      },
      async (req) => assist.waitingDraft(req.tenantId!, req.params.id, viewerOf(req)),
    )

    app.post(
      '/escalations/:id/summary',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'summarizeEscalation',
          summary: 'What the visitor wants, what the bot said, what is open',
          description: 'Kept until a new message arrives in the conversation; the next call after that writes it again.',
          response: { 200: SummaryResponse, ...errors },
        },
      },
      async (req) => assist.summary(req.tenantId!, req.params.id, viewerOf(req)),
    )
  }
