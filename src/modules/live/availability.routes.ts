import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { notFound } from '../../lib/errors.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { MemberStatusBody, MemberWithStatus, OfficeHoursBody } from './availability.schemas.js'
import type { AvailabilityService } from './availability.service.js'

/** Office hours (owners and admins set them, every member reads them) and one's own live status. */
export const availabilityRoutes =
  (deps: { guards: Guards; availability: AvailabilityService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, availability } = deps
    const base = { tags: ['live'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }

    app.get(
      '/tenants/me/office-hours',
      {
        preHandler: guards.can('member'),
        schema: {
          ...base,
          operationId: 'getOfficeHours',
          description: 'When the team answers, in its time zone (day 0 = Sunday). No weekly hours: always open, but for the holidays.',
          response: { 200: OfficeHoursBody, ...errors },
        },
      },
      (req) => availability.officeHours(req.tenantId!),
    )

    app.put(
      '/tenants/me/office-hours',
      {
        preHandler: guards.can('settings'),
        schema: {
          ...base,
          operationId: 'updateOfficeHours',
          description: 'Replaces the office hours. 422 naming the field for an unknown time zone, a bad day, time or date, or a start not before its end.',
          body: OfficeHoursBody,
          response: { 200: OfficeHoursBody, ...errors },
        },
      },
      (req) => availability.setOfficeHours(req.tenantId!, req.body),
    )

    app.put(
      '/tenants/me/members/me/status',
      {
        preHandler: guards.can('member'),
        schema: {
          ...base,
          operationId: 'updateMyStatus',
          description:
            "The caller's live status (last one wins; the dashboard's heartbeat sets online). Online members answer the widget's availability and, with auto-assignment, take queued conversations up to the agent capacity.",
          body: MemberStatusBody,
          response: { 200: MemberWithStatus, ...errors },
        },
      },
      async (req) => {
        if (!req.authUser) throw notFound('Only a signed-in member has a status')
        return availability.setStatus(req.tenantId!, req.authUser.id, req.body.status)
      },
    )
  }
