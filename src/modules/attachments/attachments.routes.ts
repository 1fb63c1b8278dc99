import multipart from '@fastify/multipart'
import { createGate } from '../../lib/gate.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { bearerSecurity, scopeOf, type Guards } from '../../http/auth.js'
import { rateLimits } from '../../http/rate-limit.js'
import { ErrorBody, RateLimitBody, Uuid, commonErrors } from '../../http/schemas.js'
import { AppError, ValidationError } from '../../lib/errors.js'
import type { BotRow } from '../bots/bots.service.js'
import { contentDisposition } from './attachments.fns.js'
import { AttachmentMetaSchema, AttachmentParams, WidgetAttachmentQuery } from './attachments.schemas.js'
import type { AttachmentsService } from './attachments.service.js'

/** What the attachment routes need of the widget: the bot a public request names (origin checked) and its session. */
export interface WidgetVisitorPort {
  botFor(req: FastifyRequest, reply: FastifyReply, publicId: string): Promise<BotRow>
  /** this bot's session, or the contract's 404 session_not_found */
  session(bot: BotRow, sessionId: string): Promise<{ owner: string }>
}

const FileDownload = Type.Unsafe<unknown>({
  type: 'string',
  format: 'binary',
  description: 'the file, as a download (Content-Disposition: attachment, X-Content-Type-Options: nosniff)',
})

/** A stored file as a download that no browser renders in our origin. */
function sendFile(reply: FastifyReply, f: { meta: { name: string; content_type: string }; bytes: Buffer }, crossOrigin: boolean) {
  return reply
    .header('content-type', f.meta.content_type === 'text/plain' ? 'text/plain; charset=utf-8' : f.meta.content_type)
    .header('content-disposition', contentDisposition(f.meta.name))
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('cache-control', 'private, no-store')
    .header('cross-origin-resource-policy', crossOrigin ? 'cross-origin' : 'same-origin')
    .send(f.bytes)
}

export const attachmentsRoutes =
  (deps: {
    guards: Guards
    attachments: AttachmentsService
    visitor: WidgetVisitorPort
    maxBytes: number
    uploadsPerHour: number
    uploadsAtOnce: number
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { attachments, visitor, maxBytes } = deps
    // a file is held whole while it is typed, cleaned and sealed: a few at once per process, the rest wait unread
    const gate = createGate(deps.uploadsAtOnce, deps.uploadsAtOnce * 8, 30_000)
    const busy = () =>
      new AppError(503, 'busy', 'Too many files are being uploaded right now; try again in a moment', { coded: true, headers: { 'retry-after': '5' } })
    // the stream is cut at the limit, never buffered whole
    await app.register(multipart, { limits: { fileSize: maxBytes, files: 1, fields: 4, parts: 6, fieldSize: 1024, headerPairs: 100 } })
    const errors = {
      403: ErrorBody,
      404: ErrorBody,
      409: ErrorBody,
      413: ErrorBody,
      415: ErrorBody,
      503: ErrorBody,
      429: Type.Union([RateLimitBody, ErrorBody]),
    }

    app.post(
      '/widget/attachments',
      {
        config: { rateLimit: { ...rateLimits.widgetAttachment, max: deps.uploadsPerHour } },
        preValidation: async (req) => {
          ;(req as { body?: unknown }).body = { file: '' }
        },
        schema: {
          tags: ['widget'],
          operationId: 'widgetUploadAttachment',
          description: `A visitor's file (multipart field \`file\`), typed by its content: PNG, JPEG, WebP, GIF, PDF, DOCX or plain text (others 415), at most ${Math.round(maxBytes / 1048576)} MB (413). Image metadata (EXIF, GPS) is removed. Send it with a message: \`attachment_ids\` of POST /widget/chat.`,
          consumes: ['multipart/form-data'],
          querystring: WidgetAttachmentQuery,
          body: Type.Object({ file: Type.String({ format: 'binary' }) }),
          response: { 201: AttachmentMetaSchema, ...commonErrors, ...errors },
        },
      },
      async (req, reply) => {
        const bot = await visitor.botFor(req, reply, req.query.bot_id)
        const session = await visitor.session(bot, req.query.session_id)
        if (session.owner === 'closed') throw new AppError(409, 'session_closed', 'This chat has ended; start a new session', { coded: true })
        const meta = await gate.run(async () => {
          const { filename, bytes } = await readFile(req, maxBytes)
          return attachments.upload(bot.tenant_id, bot.id, req.query.session_id, { filename, bytes })
        }, busy)
        return reply.code(201).send(meta)
      },
    )

    app.post(
      '/escalations/:ticket_id/attachments',
      {
        preHandler: deps.guards.can('tickets'),
        preValidation: async (req) => {
          ;(req as { body?: unknown }).body = { file: '' }
        },
        schema: {
          tags: ['attachments'],
          security: bearerSecurity,
          operationId: 'uploadEscalationAttachment',
          description: `An operator's file for a reply (multipart field \`file\`), checked as a visitor's is: PNG, JPEG, WebP, GIF, PDF, DOCX or plain text (others 415), at most ${Math.round(maxBytes / 1048576)} MB (413), image metadata removed. Send it with the reply: \`attachment_ids\` of POST /escalations/{ticket_id}/messages. The member's bots only (404 otherwise).`,
          consumes: ['multipart/form-data'],
          params: Type.Object({ ticket_id: Uuid }),
          body: Type.Object({ file: Type.String({ format: 'binary' }) }),
          response: { 201: AttachmentMetaSchema, ...commonErrors, ...errors },
        },
      },
      async (req, reply) => {
        const meta = await gate.run(
          async () => attachments.operatorUpload(req.tenantId!, req.params.ticket_id, scopeOf(req), await readFile(req, maxBytes)),
          busy,
        )
        return reply.code(201).send(meta)
      },
    )

    app.get(
      '/widget/attachments/:id',
      {
        config: { rateLimit: rateLimits.widgetHistory },
        schema: {
          tags: ['widget'],
          operationId: 'widgetGetAttachment',
          params: AttachmentParams,
          querystring: WidgetAttachmentQuery,
          response: { 200: FileDownload, ...commonErrors, 403: ErrorBody, 404: ErrorBody, 429: RateLimitBody },
        },
      },
      async (req, reply) => {
        const bot = await visitor.botFor(req, reply, req.query.bot_id)
        await visitor.session(bot, req.query.session_id)
        return sendFile(reply, await attachments.file(bot.tenant_id, req.params.id, { sessionId: req.query.session_id }), true)
      },
    )

    app.get(
      '/attachments/:id',
      {
        preHandler: deps.guards.can('tickets'),
        schema: {
          tags: ['attachments'],
          security: bearerSecurity,
          operationId: 'getAttachment',
          description: "A visitor's file, for members who see its conversation (their bots); 404 otherwise.",
          params: AttachmentParams,
          response: { 200: FileDownload, ...commonErrors, 403: ErrorBody, 404: ErrorBody },
        },
      },
      async (req, reply) => sendFile(reply, await attachments.file(req.tenantId!, req.params.id, { scope: scopeOf(req) }), false),
    )
  }

/** The one multipart file of an upload, cut at the limit while it streams (never buffered past it). */
async function readFile(req: FastifyRequest, maxBytes: number): Promise<{ filename: string | undefined; bytes: Buffer }> {
  if (!req.isMultipart()) throw new ValidationError(['body', 'file'], 'Field required', 'missing')
  try {
    const file = await req.file()
    if (!file || file.fieldname !== 'file') throw new ValidationError(['body', 'file'], 'Field required', 'missing')
    return { filename: file.filename, bytes: await file.toBuffer() }
  } catch (err) {
    throw uploadError(err, maxBytes)
  }
}

/** Multipart failures in the contract's words: too large 413, anything else unreadable 422. */
function uploadError(err: unknown, maxBytes: number): Error {
  if (err instanceof AppError) return err
  const code = (err as { code?: string })?.code
  if (code === 'FST_REQ_FILE_TOO_LARGE') {
    return new AppError(413, 'file_too_large', `The file is larger than ${Math.round(maxBytes / 1048576)} MB`, { coded: true })
  }
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return new ValidationError(['body', 'file'], 'Field required', 'missing')
  return new ValidationError(['body', 'file'], 'The upload could not be read (malformed multipart body)', 'value_error')
}
