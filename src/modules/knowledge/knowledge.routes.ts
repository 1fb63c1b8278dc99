import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest, HTTPMethods } from 'fastify'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { notFound } from '../../lib/errors.js'
import { auditRequest, type AuditPort } from '../shared/audit.port.js'
import {
  FaqListQuery,
  FaqPathParams,
  KnowledgeFaqApproveAllResponse,
  KnowledgeFaqApproveResponse,
  KnowledgeFaqItemResponse,
  KnowledgeFaqListResponse,
  KnowledgeFaqRejectResponse,
  KnowledgeFaqUpdateRequest,
  KnowledgeProfilePatchRequest,
  KnowledgeProfileResponse,
  ShortFormQuery,
  TenantFaqPathParams,
  TenantPathParams,
  type FaqListFilter,
  type KnowledgeProfilePatch,
} from './knowledge.schemas.js'
import type { KnowledgeService } from './knowledge.service.js'

/**
 * Each operation in two forms, both paths written out: the short `/knowledge/...` (optional `tenant_id`
 * query) and `/api/v1/tenants/{tenant_id}/knowledge/...`. Either way the tenant named must be the
 * caller's own; any other (existing or not) is a 404, like a missing resource.
 */
async function sameTenant(req: FastifyRequest): Promise<void> {
  const named = (req.params as { tenant_id?: string }).tenant_id ?? (req.query as { tenant_id?: string } | undefined)?.tenant_id
  if (named !== undefined && named.trim().toLowerCase() !== req.tenantId?.toLowerCase()) throw notFound('Tenant not found')
}

const faqId = (req: FastifyRequest) => (req.params as { faq_id: string }).faq_id

/** Path parameters of one form of a route: the tenant in the long form, the FAQ id where the path has one. */
function paramsOf(path: string) {
  const faq = path.includes(':faq_id')
  if (path.startsWith('/api/')) return { params: faq ? TenantFaqPathParams : TenantPathParams }
  return faq ? { params: FaqPathParams } : {}
}

export const knowledgeRoutes =
  (deps: { guards: Guards; knowledge: KnowledgeService; audit: AuditPort }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, knowledge } = deps
    /** The change, then its audit entry (the workspace audit log: who edited the bot's knowledge). */
    const audited = async <T>(
      req: FastifyRequest,
      action: string,
      itemType: string,
      itemId: string | null,
      change: Promise<T>,
      detail?: Record<string, unknown>,
    ): Promise<T> => {
      const result = await change
      await auditRequest(deps.audit, req, { action, itemType, itemId, ...(detail ? { detail } : {}) })
      return result
    }
    const base = { tags: ['knowledge'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const preHandler = [guards.can('knowledge'), sameTenant]

    type Schema = { operationId: string; querystring?: unknown; body?: unknown; response: Record<number, unknown> }
    const operations: { method: HTTPMethods; paths: [string, string]; schema: Schema; handler: (req: FastifyRequest) => Promise<unknown> }[] = []
    /** One operation at its short path and at its tenant path (operationId suffixed `ForTenant`). */
    const both = (method: HTTPMethods, paths: [string, string], schema: Schema, handler: (req: FastifyRequest) => Promise<unknown>) =>
      void operations.push({ method, paths, schema, handler })

    both(
      'GET',
      ['/knowledge/profile', '/api/v1/tenants/:tenant_id/knowledge/profile'],
      {
        operationId: 'getKnowledgeProfile',
        response: { 200: KnowledgeProfileResponse, ...errors },
      },
      async (req) => knowledge.getProfile(req.tenantId!),
    )
    both(
      'PATCH',
      ['/knowledge/profile', '/api/v1/tenants/:tenant_id/knowledge/profile'],
      {
        operationId: 'updateKnowledgeProfile',
        body: KnowledgeProfilePatchRequest,
        response: { 200: KnowledgeProfileResponse, ...errors },
      },
      async (req) =>
        audited(req, 'updated', 'knowledge_profile', null, knowledge.patchProfile(req.tenantId!, req.body as KnowledgeProfilePatch), {
          fields: Object.keys(req.body as object).slice(0, 10),
        }),
    )
    both(
      'GET',
      ['/knowledge/faq', '/api/v1/tenants/:tenant_id/knowledge/faq'],
      {
        operationId: 'listKnowledgeFaq',
        querystring: FaqListQuery,
        response: { 200: KnowledgeFaqListResponse, ...errors },
      },
      async (req) => knowledge.listFaq(req.tenantId!, req.query as FaqListFilter),
    )
    both(
      'POST',
      ['/knowledge/faq/approve-all', '/api/v1/tenants/:tenant_id/knowledge/faq/approve-all'],
      {
        operationId: 'approveAllKnowledgeFaq',
        response: { 200: KnowledgeFaqApproveAllResponse, ...errors },
      },
      async (req) => audited(req, 'approved_all', 'faq', null, knowledge.approveAll(req.tenantId!)),
    )
    both(
      'PUT',
      ['/knowledge/faq/:faq_id', '/api/v1/tenants/:tenant_id/knowledge/faq/:faq_id'],
      {
        operationId: 'updateKnowledgeFaq',
        body: KnowledgeFaqUpdateRequest,
        response: { 200: KnowledgeFaqItemResponse, ...errors },
      },
      async (req) =>
        audited(req, 'updated', 'faq', faqId(req), knowledge.updateFaq(req.tenantId!, faqId(req), req.body as { question?: string; answer?: string })),
    )
    both(
      'DELETE',
      ['/knowledge/faq/:faq_id', '/api/v1/tenants/:tenant_id/knowledge/faq/:faq_id'],
      {
        operationId: 'deleteKnowledgeFaq',
        response: { 200: KnowledgeFaqRejectResponse, ...errors },
      },
      async (req) => audited(req, 'deleted', 'faq', faqId(req), knowledge.removeFaq(req.tenantId!, faqId(req), 'deleted')),
    )
    both(
      'POST',
      ['/knowledge/faq/:faq_id/approve', '/api/v1/tenants/:tenant_id/knowledge/faq/:faq_id/approve'],
      {
        operationId: 'approveKnowledgeFaq',
        response: { 200: KnowledgeFaqApproveResponse, ...errors },
      },
      async (req) => audited(req, 'approved', 'faq', faqId(req), knowledge.approveFaq(req.tenantId!, faqId(req))),
    )
    both(
      'POST',
      ['/knowledge/faq/:faq_id/reject', '/api/v1/tenants/:tenant_id/knowledge/faq/:faq_id/reject'],
      {
        operationId: 'rejectKnowledgeFaq',
        response: { 200: KnowledgeFaqRejectResponse, ...errors },
      },
      async (req) => audited(req, 'rejected', 'faq', faqId(req), knowledge.removeFaq(req.tenantId!, faqId(req), 'rejected')),
    )

    // every short form first, then the tenant forms (the order of the OpenAPI document)
    for (const form of [0, 1] as const) {
      for (const { method, paths, schema, handler } of operations) {
        const url = paths[form]
        const operationId = form === 1 ? `${schema.operationId}ForTenant` : schema.operationId
        const querystring = schema.querystring ?? ShortFormQuery
        app.route({ method, url, preHandler, schema: { ...base, ...schema, operationId, ...paramsOf(url), querystring } as never, handler })
      }
    }
  }
