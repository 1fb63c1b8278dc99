import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { auditRequest, type AuditPort } from '../shared/audit.port.js'
import {
  GapActionResponse,
  GapAnalyzerResponse,
  GapDismissRequest,
  GapDraftResponse,
  GapListQuery,
  GapParams,
  GapSummaryOnlyResponse,
  RecalculateCommandResult,
  RecalculateQuery,
} from './gaps.schemas.js'
import type { GapsService } from './gaps.service.js'

export const gapsRoutes =
  (deps: { guards: Guards; gaps: GapsService; audit: AuditPort }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, gaps } = deps
    const base = { tags: ['gap-analyzer'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const pre = { preHandler: guards.can('knowledge') }

    app.get(
      '/gap-analyzer',
      { ...pre, schema: { ...base, operationId: 'listGaps', querystring: GapListQuery, response: { 200: GapAnalyzerResponse, ...errors } } },
      async (req) => gaps.list(req.tenantId!, req.query),
    )
    app.get(
      '/gap-analyzer/summary',
      { ...pre, schema: { ...base, operationId: 'getGapSummary', response: { 200: GapSummaryOnlyResponse, ...errors } } },
      async (req) => gaps.summary(req.tenantId!),
    )
    app.post(
      '/gap-analyzer/recalculate',
      { ...pre, schema: { ...base, operationId: 'recalculateGaps', querystring: RecalculateQuery, response: { 202: RecalculateCommandResult, ...errors } } },
      async (req, reply) => reply.code(202).send(await gaps.recalculate(req.tenantId!, req.query.mode)),
    )
    app.post(
      '/gap-analyzer/:source/:gap_id/dismiss',
      { ...pre, schema: { ...base, operationId: 'dismissGap', params: GapParams, body: GapDismissRequest, response: { 200: GapActionResponse, ...errors } } },
      async (req) => {
        const r = await gaps.setStatus(req.tenantId!, req.params.source, req.params.gap_id, 'dismissed', req.body.reason)
        await auditRequest(deps.audit, req, { action: 'dismissed', itemType: 'gap', itemId: req.params.gap_id, detail: { source: req.params.source } })
        return r
      },
    )
    app.post(
      '/gap-analyzer/:source/:gap_id/reactivate',
      { ...pre, schema: { ...base, operationId: 'reactivateGap', params: GapParams, response: { 200: GapActionResponse, ...errors } } },
      async (req) => {
        const r = await gaps.setStatus(req.tenantId!, req.params.source, req.params.gap_id, 'active', null)
        await auditRequest(deps.audit, req, { action: 'reactivated', itemType: 'gap', itemId: req.params.gap_id, detail: { source: req.params.source } })
        return r
      },
    )
    app.post(
      '/gap-analyzer/:source/:gap_id/draft',
      { ...pre, schema: { ...base, operationId: 'draftGapArticle', params: GapParams, response: { 200: GapDraftResponse, ...errors } } },
      async (req) => gaps.draft(req.tenantId!, req.params.source, req.params.gap_id),
    )
  }
