import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, viewerOf, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import {
  AssignRequest,
  DeleteOriginalResponse,
  EscalationList,
  EscalationTicket,
  ResolveRequest,
  TicketListQuery,
  TicketParams,
  TicketQuery,
} from './escalations.schemas.js'
import type { EscalationsService } from './escalations.service.js'

export const escalationsRoutes =
  (deps: { guards: Guards; escalations: EscalationsService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, escalations } = deps
    const base = { tags: ['escalations'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const pre = { preHandler: guards.can('tickets') }

    app.get(
      '/escalations',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'listEscalations',
          summary: 'Support tickets, newest first',
          description:
            "Tickets of the caller's bots. assignee=me|unassigned|<user id> filters the inbox (Mine / Unassigned / one member's). include_original=true adds the unredacted question where one is stored (owners, admins, agents granted it); each one shown is audited as original_viewed and in the audit log.",
          querystring: TicketListQuery,
          response: { 200: EscalationList, ...errors },
        },
      },
      (req) =>
        escalations.list(
          req.tenantId!,
          {
            status: req.query.status,
            assignee: req.query.assignee,
            needsPerson: req.query.needs_person,
            q: req.query.q,
            includeOriginal: req.query.include_original,
            limit: req.query.limit,
            offset: req.query.offset,
          },
          viewerOf(req),
        ),
    )

    app.get(
      '/escalations/:ticket_id',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'getEscalation',
          description:
            'Viewing changes nothing (the first operator reply or a take moves an open ticket to in_progress). include_original=true is audited as original_viewed.',
          params: TicketParams,
          querystring: TicketQuery,
          response: { 200: EscalationTicket, ...errors },
        },
      },
      (req) => escalations.get(req.tenantId!, req.params.ticket_id, { includeOriginal: req.query.include_original }, viewerOf(req)),
    )

    app.patch(
      '/escalations/:ticket_id',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'assignEscalation',
          description:
            'Assigns the ticket to a member who works on tickets and sees its bot (null unassigns). Agents may only take a free ticket or give back their own; owners and admins assign anyone. The assignee is mailed when someone else assigned it (unless notify_on_assignment is off); emits ticket.assigned.',
          params: TicketParams,
          body: AssignRequest,
          response: { 200: EscalationTicket, ...errors },
        },
      },
      (req) => escalations.assign(req.tenantId!, req.params.ticket_id, req.body.assignee_user_id, viewerOf(req)),
    )

    app.post(
      '/escalations/:ticket_id/resolve',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'resolveEscalation',
          description:
            "Sets the ticket resolved and delivers resolution_text into the visitor's chat as an operator reply; it is mailed to the visitor after OPERATOR_REPLY_GRACE_SECONDS unless the widget's read receipt shows it was seen.",
          params: TicketParams,
          body: ResolveRequest,
          response: { 200: EscalationTicket, ...errors },
        },
      },
      (req) => escalations.resolve(req.tenantId!, req.params.ticket_id, req.body.resolution_text, viewerOf(req)),
    )

    app.post(
      '/escalations/:ticket_id/delete-original',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'deleteEscalationOriginal',
          description: "Erases for good the encrypted original of the ticket's question and of its transcript's messages; the redacted text stays.",
          params: TicketParams,
          response: { 200: DeleteOriginalResponse, ...errors },
        },
      },
      (req) => escalations.deleteOriginal(req.tenantId!, req.params.ticket_id, viewerOf(req)),
    )
  }
