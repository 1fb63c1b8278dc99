import { auditRequest, type AuditPort } from '../shared/audit.port.js'
import multipart from '@fastify/multipart'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { rateLimits } from '../../http/rate-limit.js'
import { ErrorBody, RateLimitBody, commonErrors } from '../../http/schemas.js'
import { badRequest, ValidationError } from '../../lib/errors.js'
import {
  DocumentDetailResponse,
  DocumentHealthStatusResponse,
  DocumentListResponse,
  DocumentParams,
  DocumentResponse,
  DocumentUploadBody,
  UploadUnprocessable,
} from './documents.schemas.js'
import type { DocumentsService } from './documents.service.js'

const MB = 1024 * 1024

export const documentsRoutes =
  (deps: { guards: Guards; documents: DocumentsService; audit: AuditPort; maxUploadBytes: number; uploadRatePerHour: number }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, documents, maxUploadBytes, uploadRatePerHour } = deps
    const base = { tags: ['documents'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const pre = { preHandler: guards.can('knowledge') }

    // Limits apply while the stream is read: an oversized file is cut off at MAX_UPLOAD_BYTES, never buffered whole.
    await app.register(multipart, {
      limits: { fileSize: maxUploadBytes, files: 1, fields: 10, parts: 12, fieldSize: 4096, headerPairs: 100 },
    })

    app.get('/documents', { ...pre, schema: { ...base, operationId: 'listDocuments', response: { 200: DocumentListResponse, ...errors } } }, async (req) => ({
      documents: await documents.present(req.tenantId!, await documents.list(req.tenantId!)),
    }))

    app.post(
      '/documents',
      {
        ...pre,
        config: { rateLimit: { ...rateLimits.upload, max: uploadRatePerHour } },
        // The multipart stream is not a JSON body: the schema documents it, the handler reads it.
        preValidation: async (req) => {
          ;(req as { body?: unknown }).body = { file: '' }
        },
        schema: {
          ...base,
          operationId: 'uploadDocument',
          description: `Upload one file (multipart field \`file\`): pdf, md, mdx, docx, doc, txt, json, yaml, yml; at most ${Math.round(maxUploadBytes / MB)} MB. Indexing continues in the background (status \`processing\` until \`ready\`).`,
          consumes: ['multipart/form-data'],
          body: DocumentUploadBody,
          response: { 201: DocumentResponse, 400: ErrorBody, 409: ErrorBody, 429: RateLimitBody, ...errors, 422: UploadUnprocessable },
        },
      },
      async (req, reply) => {
        if (!req.isMultipart()) throw new ValidationError(['body', 'file'], 'Field required', 'missing')
        let file
        try {
          file = await req.file()
        } catch (err) {
          throw uploadError(err, maxUploadBytes)
        }
        if (!file || file.fieldname !== 'file') throw new ValidationError(['body', 'file'], 'Field required', 'missing')
        let bytes: Buffer
        try {
          bytes = await file.toBuffer()
        } catch (err) {
          throw uploadError(err, maxUploadBytes)
        }
        const doc = await documents.upload(req.tenantId!, { filename: file.filename, bytes })
        await auditRequest(deps.audit, req, { action: 'created', itemType: 'document', itemId: doc.id, detail: { filename: file.filename } })
        return reply.code(201).send((await documents.present(req.tenantId!, [doc]))[0])
      },
    )

    app.get(
      '/documents/:document_id',
      { ...pre, schema: { ...base, operationId: 'getDocument', params: DocumentParams, response: { 200: DocumentDetailResponse, ...errors } } },
      async (req) => {
        const d = await documents.detail(req.tenantId!, req.params.document_id)
        const [progress, [shown]] = await Promise.all([documents.progress(req.tenantId!, d), documents.present(req.tenantId!, [d])])
        return { ...shown!, parsed_text: d.parsed_text, parsed_text_length: d.parsed_text.length, progress }
      },
    )

    app.delete(
      '/documents/:document_id',
      { ...pre, schema: { ...base, operationId: 'deleteDocument', params: DocumentParams, response: { 204: Type.Null(), ...errors } } },
      async (req, reply) => {
        await documents.remove(req.tenantId!, req.params.document_id)
        await auditRequest(deps.audit, req, { action: 'deleted', itemType: 'document', itemId: req.params.document_id })
        return reply.code(204).send(null)
      },
    )

    app.get(
      '/documents/:document_id/health',
      {
        ...pre,
        schema: { ...base, operationId: 'getDocumentHealth', params: DocumentParams, response: { 200: DocumentHealthStatusResponse, ...errors } },
      },
      (req) => documents.health(req.tenantId!, req.params.document_id),
    )

    app.post(
      '/documents/:document_id/health/run',
      {
        ...pre,
        schema: { ...base, operationId: 'runDocumentHealth', params: DocumentParams, response: { 200: DocumentHealthStatusResponse, ...errors } },
      },
      (req) => documents.runHealth(req.tenantId!, req.params.document_id),
    )
  }

/** Multipart failures in the contract's words: too large -> 400, malformed stream -> 422. */
function uploadError(err: unknown, maxUploadBytes: number): Error {
  const code = (err as { code?: string })?.code
  if (code === 'FST_REQ_FILE_TOO_LARGE') {
    return badRequest(`File too large: the limit is ${formatBytes(maxUploadBytes)}`, 'file_too_large')
  }
  if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return badRequest('Upload exactly one file in the field "file"', 'too_many_parts')
  }
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return new ValidationError(['body', 'file'], 'Field required', 'missing')
  return new ValidationError(['body', 'file'], 'The upload could not be read (malformed multipart body)', 'value_error')
}

function formatBytes(n: number): string {
  return n >= MB ? `${Math.round((n / MB) * 10) / 10} MB` : `${Math.round(n / 1024)} KB`
}
