import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, type Guards } from '../../../http/auth.js'
import { ErrorBody, commonErrors } from '../../../http/schemas.js'
import { PiiEventList, PiiEventsQuery, RetentionQuery, RetentionResult } from './privacy.schemas.js'
import type { PrivacyService } from './privacy.service.js'

export const privacyRoutes =
  (deps: { guards: Guards; privacy: PrivacyService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, privacy } = deps
    const base = { tags: ['privacy'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }

    app.get(
      '/tenants/privacy/pii-events',
      {
        preHandler: guards.can('audit'),
        schema: {
          ...base,
          operationId: 'listPiiEvents',
          summary: 'PII audit trail, newest first',
          description: 'Redactions in messages and tickets, and every viewing or erasure of an original with the acting user.',
          querystring: PiiEventsQuery,
          response: { 200: PiiEventList, ...errors },
        },
      },
      (req) => privacy.listEvents(req.tenantId!, req.query),
    )

    app.delete(
      '/tenants/privacy/pii-events/retention',
      {
        preHandler: guards.can('settings'),
        schema: {
          ...base,
          operationId: 'applyPiiEventRetention',
          summary: 'Delete PII audit events older than retention_days',
          description:
            'Deletes now, and keeps retention_days as the tenant retention the daily cleanup applies (default 365); the workspace audit log is kept as long.',
          querystring: RetentionQuery,
          response: { 200: RetentionResult, ...errors },
        },
      },
      (req) => privacy.applyRetention(req.tenantId!, req.query.retention_days),
    )
  }
