import { auditRequest, type AuditPort } from '../../shared/audit.port.js'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, type Guards } from '../../../http/auth.js'
import { ErrorBody, commonErrors } from '../../../http/schemas.js'
import type { DocumentsService } from '../documents.service.js'
import { rateLimits } from '../../../http/rate-limit.js'
import {
  ConnectorCreate,
  ConnectorTestResult,
  KnowledgeSources,
  SourcePageParams,
  SourceParams,
  UrlSource,
  UrlSourceCreate,
  UrlSourceDetail,
  UrlSourceUpdate,
} from './sources.schemas.js'
import type { SourcesService } from './sources.service.js'

/**
 * /documents/sources/*. Static segments win over the documents module's `/documents/:document_id` in
 * Fastify's router, so "sources" is never taken for a document id.
 */
export const sourcesRoutes =
  (deps: { guards: Guards; sources: SourcesService; present: DocumentsService['present']; audit: AuditPort }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, sources } = deps
    const base = { tags: ['documents'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }

    app.get(
      '/documents/sources',
      { preHandler: guards.can('knowledge'), schema: { ...base, operationId: 'listKnowledgeSources', response: { 200: KnowledgeSources, ...errors } } },
      async (req) => {
        const [documents, urlSources] = await Promise.all([sources.uploadedDocuments(req.tenantId!), sources.list(req.tenantId!)])
        return { documents: await deps.present(req.tenantId!, documents), url_sources: urlSources }
      },
    )

    app.post(
      '/documents/sources/url',
      {
        preHandler: guards.can('knowledge'),
        schema: { ...base, operationId: 'createUrlSource', body: UrlSourceCreate, response: { 201: UrlSource, 400: ErrorBody, 409: ErrorBody, ...errors } },
      },
      async (req, reply) => {
        const created = await sources.create(req.tenantId!, req.body)
        await auditRequest(deps.audit, req, { action: 'created', itemType: 'source', itemId: created.id, detail: { url: req.body.url } })
        return reply.code(201).send(created)
      },
    )

    app.post(
      '/documents/sources/connector',
      {
        preHandler: guards.can('knowledge'),
        schema: {
          ...base,
          operationId: 'createConnectorSource',
          description: 'A help centre (Zendesk, Intercom, Freshdesk) or a GitHub docs folder, synced through its API (docs/connectors.md).',
          body: ConnectorCreate,
          response: { 201: UrlSource, ...errors },
        },
      },
      async (req, reply) => {
        const created = await sources.createConnector(req.tenantId!, req.body)
        await auditRequest(deps.audit, req, { action: 'created', itemType: 'source', itemId: created.id, detail: { kind: req.body.kind, url: created.url } })
        return reply.code(201).send(created)
      },
    )

    app.post(
      '/documents/sources/connector/test',
      {
        preHandler: guards.can('knowledge'),
        config: { rateLimit: rateLimits.connectorTest },
        schema: {
          ...base,
          operationId: 'testConnectorSource',
          description: `Beyond the contract: lists the first articles the account shows with these settings, storing nothing. ${rateLimits.connectorTest.max} a minute per workspace.`,
          body: ConnectorCreate,
          response: { 200: ConnectorTestResult, 429: ErrorBody, ...errors },
        },
      },
      async (req) => sources.testConnector(req.body),
    )

    app.get(
      '/documents/sources/:source_id',
      {
        preHandler: guards.can('knowledge'),
        schema: { ...base, operationId: 'getUrlSource', params: SourceParams, response: { 200: UrlSourceDetail, ...errors } },
      },
      async (req) => sources.detail(req.tenantId!, req.params.source_id),
    )

    app.patch(
      '/documents/sources/:source_id',
      {
        preHandler: guards.can('knowledge'),
        schema: { ...base, operationId: 'updateUrlSource', params: SourceParams, body: UrlSourceUpdate, response: { 200: UrlSource, ...errors } },
      },
      async (req) => {
        const updated = await sources.update(req.tenantId!, req.params.source_id, req.body)
        await auditRequest(deps.audit, req, { action: 'updated', itemType: 'source', itemId: req.params.source_id, detail: { fields: Object.keys(req.body) } })
        return updated
      },
    )

    app.delete(
      '/documents/sources/:source_id',
      {
        preHandler: guards.can('knowledge'),
        schema: { ...base, operationId: 'deleteUrlSource', params: SourceParams, response: { 204: Type.Null(), ...errors } },
      },
      async (req, reply) => {
        await sources.remove(req.tenantId!, req.params.source_id)
        await auditRequest(deps.audit, req, { action: 'deleted', itemType: 'source', itemId: req.params.source_id })
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/documents/sources/:source_id/refresh',
      {
        preHandler: guards.can('knowledge'),
        schema: { ...base, operationId: 'refreshUrlSource', params: SourceParams, response: { 200: UrlSource, 409: ErrorBody, 429: ErrorBody, ...errors } },
      },
      async (req) => sources.refresh(req.tenantId!, req.params.source_id),
    )

    app.delete(
      '/documents/sources/:source_id/pages/:document_id',
      {
        preHandler: guards.can('knowledge'),
        schema: { ...base, operationId: 'deleteUrlSourcePage', params: SourcePageParams, response: { 204: Type.Null(), ...errors } },
      },
      async (req, reply) => {
        await sources.removePage(req.tenantId!, req.params.source_id, req.params.document_id)
        return reply.code(204).send(null)
      },
    )
  }
