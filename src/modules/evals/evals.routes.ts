import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { bearerSecurity, scopeOf, type Guards } from '../../http/auth.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { badRequest, ValidationError } from '../../lib/errors.js'
import {
  CaseInput,
  CaseListQuery,
  CaseListResponse,
  CaseParams,
  CasePatch,
  CaseResponse,
  DiffQuery,
  DiffResponse,
  FromSessionBody,
  ImportBody,
  ImportResponse,
  RunAccepted,
  RunInput,
  RunListResponse,
  RunParams,
  RunQuery,
  RunResponse,
  SessionParams,
  Settings,
} from './evals.schemas.js'
import type { EvalsService } from './evals.service.js'

const IMPORT_MAX_BYTES = 2 * 1024 * 1024

/** /evals/cases and /evals/runs: owners, admins and editors write and run; analysts read too. */
export const evalsRoutes =
  (deps: { guards: Guards; evals: EvalsService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, evals } = deps
    const base = { tags: ['evals'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    const write = { preHandler: guards.can('evals') }
    const read = { preHandler: guards.can('evals_read') }

    await app.register(multipart, { limits: { fileSize: IMPORT_MAX_BYTES, files: 1, fields: 5, parts: 6, fieldSize: 1024, headerPairs: 100 } })

    app.get('/evals/settings', { ...read, schema: { ...base, operationId: 'getEvalSettings', response: { 200: Settings, ...errors } } }, async (req) =>
      evals.settings(req.tenantId!),
    )
    app.put(
      '/evals/settings',
      {
        ...write,
        schema: {
          ...base,
          operationId: 'updateEvalSettings',
          description: '`evals_auto_run`: a run after the knowledge changes (a document added, changed or deleted, a crawl finishing), at most one an hour.',
          body: Settings,
          response: { 200: Settings, ...errors },
        },
      },
      async (req) => evals.updateSettings(req.tenantId!, req.body, scopeOf(req)),
    )
    app.get(
      '/evals/cases',
      {
        ...read,
        schema: {
          ...base,
          operationId: 'listEvalCases',
          description:
            'In creation order, `limit` a page (default 100, at most 1000); pass next_cursor as cursor for the next page (null on the last). `total` counts every case the caller sees with this filter.',
          querystring: CaseListQuery,
          response: { 200: CaseListResponse, ...errors },
        },
      },
      async (req) => evals.listCases(req.tenantId!, req.query, scopeOf(req)),
    )
    app.post(
      '/evals/cases',
      { ...write, schema: { ...base, operationId: 'createEvalCase', body: CaseInput, response: { 201: CaseResponse, ...errors } } },
      async (req, reply) => reply.code(201).send(await evals.createCase(req.tenantId!, req.body, scopeOf(req))),
    )
    app.patch(
      '/evals/cases/:id',
      { ...write, schema: { ...base, operationId: 'updateEvalCase', params: CaseParams, body: CasePatch, response: { 200: CaseResponse, ...errors } } },
      async (req) => evals.updateCase(req.tenantId!, req.params.id, req.body, scopeOf(req)),
    )
    app.delete(
      '/evals/cases/:id',
      { ...write, schema: { ...base, operationId: 'deleteEvalCase', params: CaseParams, response: { 204: Type.Null(), ...errors } } },
      async (req, reply) => {
        await evals.deleteCase(req.tenantId!, req.params.id, scopeOf(req))
        return reply.code(204).send(null)
      },
    )
    app.post(
      '/evals/cases/import',
      {
        ...write,
        // the multipart stream is not a JSON body: the schema documents it, the handler reads it
        preValidation: async (req) => {
          ;(req as { body?: unknown }).body = { file: '' }
        },
        schema: {
          ...base,
          operationId: 'importEvalCases',
          description:
            'Multipart field `file`: CSV with the header `question, expected_outcome, sources, facts, tags` ("|" between several values) or JSONL of cases. Each valid line is created; each other is reported with its line number.',
          consumes: ['multipart/form-data'],
          body: ImportBody,
          response: { 200: ImportResponse, 400: ErrorBody, ...errors },
        },
      },
      async (req) => {
        if (!req.isMultipart()) throw new ValidationError(['body', 'file'], 'Field required', 'missing')
        const file = await req.file()
        if (!file || file.fieldname !== 'file') throw new ValidationError(['body', 'file'], 'Field required', 'missing')
        let bytes: Buffer
        try {
          bytes = await file.toBuffer()
        } catch {
          throw badRequest(`The file is larger than ${IMPORT_MAX_BYTES / 1024 / 1024} MB`, 'file_too_large')
        }
        return evals.importCases(req.tenantId!, bytes.toString('utf8'), scopeOf(req))
      },
    )
    app.post(
      '/evals/cases/from-session/:session_id',
      {
        ...write,
        schema: {
          ...base,
          operationId: 'createEvalCaseFromSession',
          params: SessionParams,
          body: Type.Optional(FromSessionBody),
          response: { 201: CaseResponse, ...errors },
        },
      },
      async (req, reply) => reply.code(201).send(await evals.caseFromSession(req.tenantId!, req.params.session_id, req.body?.expect, scopeOf(req))),
    )

    app.post(
      '/evals/runs',
      { ...write, schema: { ...base, operationId: 'startEvalRun', body: Type.Optional(RunInput), response: { 202: RunAccepted, 409: ErrorBody, ...errors } } },
      async (req, reply) => reply.code(202).send(await evals.startRun(req.tenantId!, req.body ?? {}, req.authUser?.id ?? null, scopeOf(req))),
    )
    app.get('/evals/runs', { ...read, schema: { ...base, operationId: 'listEvalRuns', response: { 200: RunListResponse, ...errors } } }, async (req) =>
      evals.listRuns(req.tenantId!, scopeOf(req)),
    )
    app.get(
      '/evals/runs/:id',
      {
        ...read,
        schema: {
          ...base,
          operationId: 'getEvalRun',
          description: 'The run with its results; `format=junit`: JUnit XML (application/xml), one testcase per case.',
          params: RunParams,
          querystring: RunQuery,
          response: { 200: Type.Union([RunResponse, Type.String({ description: 'JUnit XML' })]), ...errors },
        },
      },
      async (req, reply) => {
        if (req.query.format === 'junit')
          return reply.type('application/xml; charset=utf-8').send(await evals.junit(req.tenantId!, req.params.id, scopeOf(req)))
        return evals.getRun(req.tenantId!, req.params.id, scopeOf(req))
      },
    )
    app.get(
      '/evals/runs/:id/diff',
      { ...read, schema: { ...base, operationId: 'diffEvalRuns', params: RunParams, querystring: DiffQuery, response: { 200: DiffResponse, ...errors } } },
      async (req) => evals.diff(req.tenantId!, req.params.id, req.query.against, scopeOf(req)),
    )
  }
