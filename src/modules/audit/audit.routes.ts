import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { AuditLogPage, AuditLogQuery } from './audit.schemas.js'
import type { AuditService } from './audit.service.js'

export const auditRoutes =
  (deps: { guards: Guards; audit: AuditService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, audit } = deps
    app.get(
      '/tenants/me/audit-log',
      {
        preHandler: guards.can('audit'),
        schema: {
          tags: ['team'],
          security: bearerSecurity,
          operationId: 'listAuditLog',
          summary: "The workspace's audit log, newest first",
          description:
            'Who (a member, or null for the system and API-key callers), when, from which IP, what and on which item. Filters: member (user id), action, from/to (at >= from, at < to); pages by next_cursor. Entries are kept as long as the PII retention setting (default PII_RETENTION_DAYS). Owners and admins only.',
          querystring: AuditLogQuery,
          response: { 200: AuditLogPage, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, ...commonErrors },
        },
      },
      (req) => audit.list(req.tenantId!, req.query),
    )
  }
