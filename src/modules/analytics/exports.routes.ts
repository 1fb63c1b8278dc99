import { createReadStream } from 'node:fs'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { bearerSecurity, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { ExportAccepted, ExportListResponse, ExportParams, ExportRequest, ExportStatusResponse } from './analytics.schemas.js'
import type { ExportsService } from './exports.service.js'

/** POST /exports, GET /exports, GET /exports/{id}, GET /exports/{id}/download: owners, admins and analysts. */
export const exportsRoutes =
  (deps: { guards: Guards; exports: ExportsService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, exports } = deps
    const base = { tags: ['analytics'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const pre = { preHandler: guards.can('analytics') }

    app.post(
      '/exports',
      { ...pre, schema: { ...base, operationId: 'createExport', body: ExportRequest, response: { 202: ExportAccepted, ...errors } } },
      async (req, reply) =>
        reply.code(202).send(await exports.create(req.tenantId!, req.body, { userId: req.authUser?.id ?? null, ip: req.ip }, req.member?.botIds ?? null)),
    )
    app.get('/exports', { ...pre, schema: { ...base, operationId: 'listExports', response: { 200: ExportListResponse, ...errors } } }, async (req) =>
      exports.list(req.tenantId!, req.member?.botIds ?? null),
    )
    app.get(
      '/exports/:id',
      { ...pre, schema: { ...base, operationId: 'getExport', params: ExportParams, response: { 200: ExportStatusResponse, ...errors } } },
      async (req) => exports.get(req.tenantId!, req.params.id, req.member?.botIds ?? null),
    )
    app.get(
      '/exports/:id/download',
      {
        ...pre,
        schema: {
          ...base,
          operationId: 'downloadExport',
          description: 'The file, streamed (text/csv or application/x-ndjson). 409 while not finished, 410 once its link expired (24 h).',
          params: ExportParams,
          response: { 200: Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'the file' }), 409: ErrorBody, 410: ErrorBody, ...errors },
        },
      },
      async (req, reply) => {
        const file = await exports.download(req.tenantId!, req.params.id, req.member?.botIds ?? null)
        return reply
          .type(file.contentType)
          .header('content-length', file.size)
          .header('content-disposition', `attachment; filename="${file.fileName}"`)
          .header('cache-control', 'private, no-store')
          .send(createReadStream(file.path))
      },
    )
  }
