import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { bearerSecurity, viewerOf, type Guards, type Viewer } from '../../http/auth.js'
import { rateLimits } from '../../http/rate-limit.js'
import { ErrorBody, ValidationErrorBody, commonErrors } from '../../http/schemas.js'
import { EscalationTicket } from '../escalations/escalations.schemas.js'
import { LiveTicketParams, OperatorMessageBody, OperatorMessageResponse, TeamEventsQuery, TypingBody } from './live.schemas.js'
import type { LiveService } from './live.service.js'
import type { LiveStreams } from './live.stream.js'

/** The team's side of a live conversation: its messages and notes, handing it back to the bot, closing it, typing. */
export const liveRoutes =
  (deps: {
    guards: Guards
    live: LiveService
    streams: LiveStreams
    /** The ticket as the escalations module presents it. */
    ticketView: (tenantId: string, ticketId: string, viewer: Viewer) => Promise<unknown>
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, live } = deps
    const base = { tags: ['live'], security: bearerSecurity, params: LiveTicketParams }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody }
    const pre = { preHandler: guards.can('tickets') }
    // open streams would hold the server's close: end them (clients reconnect with Last-Event-ID)
    app.addHook('preClose', async () => deps.streams.closeAll())

    app.get(
      '/escalations/events',
      {
        ...pre,
        config: { rateLimit: rateLimits.liveEvents },
        schema: {
          tags: ['live'],
          security: bearerSecurity,
          operationId: 'escalationEvents',
          summary: "The team's live event stream",
          description:
            'text/event-stream of every conversation of the bots the member sees: message (visitor and operator messages, internal notes with internal: true), owner, typing, read. Each frame has `id: <seq>` (per workspace, strictly increasing); reconnecting with Last-Event-ID (or ?after=) replays every later event once, in order. Without either the stream starts now. A `: ping` comment every 15 s keeps it alive.',
          querystring: TeamEventsQuery,
          response: { 200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }, ...errors },
        },
      },
      async (req, reply) => {
        await deps.streams.team(req, reply, req.tenantId!, viewerOf(req).scope, req.query.after)
      },
    )

    app.post(
      '/escalations/:ticket_id/messages',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'postEscalationMessage',
          summary: "A message into the visitor's chat, or an internal note",
          description:
            "A message takes the conversation (owner human; the ticket's assignee, else the author) and reaches the visitor's stream at once; it is mailed after the grace period unless the widget's read receipt shows it was seen. An internal note reaches the team's stream only. 409 session_closed for a closed conversation, ticket_resolved for a resolved ticket (notes are always accepted).",
          body: OperatorMessageBody,
          // a validation list, or the coded attachments_unavailable (a file not of this ticket, or sent already)
          response: { 201: OperatorMessageResponse, ...errors, 422: Type.Union([ValidationErrorBody, ErrorBody]) },
        },
      },
      async (req, reply) => {
        const m = await live.postMessage(req.tenantId!, req.params.ticket_id, req.body, viewerOf(req))
        return reply.code(201).send(m)
      },
    )

    app.post(
      '/escalations/:ticket_id/return-to-bot',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'returnEscalationToBot',
          description: "The bot answers the conversation again (owner bot); its next answer has the person's part in its context. The ticket stays as it is.",
          response: { 200: EscalationTicket, ...errors },
        },
      },
      async (req) => {
        await live.returnToBot(req.tenantId!, req.params.ticket_id, viewerOf(req))
        return deps.ticketView(req.tenantId!, req.params.ticket_id, viewerOf(req)) as never
      },
    )

    app.post(
      '/escalations/:ticket_id/close',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'closeEscalationConversation',
          description: "Closes the conversation (owner closed): the visitor's next message is refused with session_closed.",
          response: { 200: EscalationTicket, ...errors },
        },
      },
      async (req) => {
        await live.close(req.tenantId!, req.params.ticket_id, viewerOf(req))
        return deps.ticketView(req.tenantId!, req.params.ticket_id, viewerOf(req)) as never
      },
    )

    app.post(
      '/escalations/:ticket_id/typing',
      {
        ...pre,
        config: { rateLimit: rateLimits.typing },
        schema: {
          ...base,
          operationId: 'escalationTyping',
          description: 'The operator is typing (on: false when it stops); lapses after 30 s. Typing a note (internal) reaches the team only.',
          body: TypingBody,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (req, reply) => {
        await live.operatorTyping(req.tenantId!, req.params.ticket_id, req.body, viewerOf(req))
        return reply.code(204).send(null)
      },
    )
  }
