import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { notFound } from '../../lib/errors.js'
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
 * Each operation in two forms from one definition: the short `/knowledge/...` (optional `tenant_id`
 * query) and `/api/v1/tenants/{tenant_id}/knowledge/...`. Either way the tenant named must be the
 * caller's own; any other (existing or not) is a 404, like a missing resource.
 */
const FORMS = [
  { prefix: '/knowledge', long: false },
  { prefix: '/api/v1/tenants/:tenant_id/knowledge', long: true },
] as const

async function sameTenant(req: FastifyRequest): Promise<void> {
  const named = (req.params as { tenant_id?: string }).tenant_id ?? (req.query as { tenant_id?: string } | undefined)?.tenant_id
  if (named !== undefined && named.trim().toLowerCase() !== req.tenantId?.toLowerCase()) throw notFound('Tenant not found')
}

const faqId = (req: FastifyRequest) => (req.params as { faq_id: string }).faq_id

export const knowledgeRoutes =
  (deps: { guards: Guards; knowledge: KnowledgeService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, knowledge } = deps
    const base = { tags: ['knowledge'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const preHandler = [guards.tenant, sameTenant]

    for (const form of FORMS) {
      const p = form.prefix
      const op = (name: string) => (form.long ? `${name}ForTenant` : name)
      const plain = form.long ? { params: TenantPathParams } : {}
      const withFaq = { params: form.long ? TenantFaqPathParams : FaqPathParams }

      app.get(
        `${p}/profile`,
        { preHandler, schema: { ...base, operationId: op('getKnowledgeProfile'), ...plain, querystring: ShortFormQuery, response: { 200: KnowledgeProfileResponse, ...errors } } },
        async (req) => knowledge.getProfile(req.tenantId!),
      )
      app.patch(
        `${p}/profile`,
        {
          preHandler,
          schema: {
            ...base,
            operationId: op('updateKnowledgeProfile'),
            ...plain,
            querystring: ShortFormQuery,
            body: KnowledgeProfilePatchRequest,
            response: { 200: KnowledgeProfileResponse, ...errors },
          },
        },
        async (req) => knowledge.patchProfile(req.tenantId!, req.body as KnowledgeProfilePatch),
      )
      app.get(
        `${p}/faq`,
        { preHandler, schema: { ...base, operationId: op('listKnowledgeFaq'), ...plain, querystring: FaqListQuery, response: { 200: KnowledgeFaqListResponse, ...errors } } },
        async (req) => knowledge.listFaq(req.tenantId!, req.query as FaqListFilter),
      )
      app.post(
        `${p}/faq/approve-all`,
        { preHandler, schema: { ...base, operationId: op('approveAllKnowledgeFaq'), ...plain, querystring: ShortFormQuery, response: { 200: KnowledgeFaqApproveAllResponse, ...errors } } },
        async (req) => knowledge.approveAll(req.tenantId!),
      )
      app.put(
        `${p}/faq/:faq_id`,
        {
          preHandler,
          schema: {
            ...base,
            operationId: op('updateKnowledgeFaq'),
            ...withFaq,
            querystring: ShortFormQuery,
            body: KnowledgeFaqUpdateRequest,
            response: { 200: KnowledgeFaqItemResponse, ...errors },
          },
        },
        async (req) => knowledge.updateFaq(req.tenantId!, faqId(req), req.body as { question?: string; answer?: string }),
      )
      app.delete(
        `${p}/faq/:faq_id`,
        { preHandler, schema: { ...base, operationId: op('deleteKnowledgeFaq'), ...withFaq, querystring: ShortFormQuery, response: { 200: KnowledgeFaqRejectResponse, ...errors } } },
        async (req) => knowledge.removeFaq(req.tenantId!, faqId(req), 'deleted'),
      )
      app.post(
        `${p}/faq/:faq_id/approve`,
        { preHandler, schema: { ...base, operationId: op('approveKnowledgeFaq'), ...withFaq, querystring: ShortFormQuery, response: { 200: KnowledgeFaqApproveResponse, ...errors } } },
        async (req) => knowledge.approveFaq(req.tenantId!, faqId(req)),
      )
      app.post(
        `${p}/faq/:faq_id/reject`,
        { preHandler, schema: { ...base, operationId: op('rejectKnowledgeFaq'), ...withFaq, querystring: ShortFormQuery, response: { 200: KnowledgeFaqRejectResponse, ...errors } } },
        async (req) => knowledge.removeFaq(req.tenantId!, faqId(req), 'rejected'),
      )
    }
  }
