import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import { createFileCipher } from './attachments.crypto.js'
import { attachmentsJobs } from './attachments.jobs.js'
import type { Db } from '../../db/client.js'
import { AppError } from '../../lib/errors.js'
import type { AttachmentsPort, ClaimedAttachment, OperatorFilesPort } from './attachments.port.js'
import { createRecentImages } from './attachments.recent.js'
import { createAttachmentsRepo } from './attachments.repo.js'
import { attachmentsRoutes, type WidgetVisitorPort } from './attachments.routes.js'
import { createAttachmentsService, type ParseText } from './attachments.service.js'

/**
 * The attachments module (issue 54): a visitor's files, their routes, the port the chat turn claims them through
 * and their retention. The parsers and the widget's visitor checks are the documents' and the widget's, wired
 * later: they are reached when a request comes, not now.
 */
export function wireAttachments(ctx: AppContext, guards: Guards, deps: { parse: ParseText; visitor: WidgetVisitorPort }) {
  const { db, config } = ctx
  const repo = createAttachmentsRepo(db, ctx.database.kind)
  const files = createFileCipher(config.ENCRYPTION_KEY)
  // a visitor's image kept from its upload to the message that sends it, within 32 MB and 10 minutes per process
  const recent = createRecentImages(32 * 1024 * 1024, 10 * 60_000)
  const service = createAttachmentsService({
    clock: ctx.clock,
    repo,
    files,
    cipher: ctx.cipher,
    parse: deps.parse,
    piiTypes: async (tenantId) =>
      (await db.selectFrom('tenants').select('pii_optional_types').where('id', '=', tenantId).executeTakeFirst())?.pii_optional_types ?? [],
    settings: {
      maxBytes: config.ATTACHMENT_MAX_BYTES,
      maxPixels: config.ATTACHMENT_MAX_PIXELS,
      perSession: config.ATTACHMENTS_PER_SESSION,
      maxTextChars: 50_000,
      zip: { maxEntries: 2000, maxExpandedBytes: 64 * 1024 * 1024 },
    },
    log: ctx.log,
    recent,
  })
  const port: AttachmentsPort = {
    async claim(tenantId, sessionId, ids, messageId) {
      const rows = await repo.claim(tenantId, sessionId, ids, messageId)
      const byId = new Map(rows.map((r) => [r.id, r]))
      const out: ClaimedAttachment[] = []
      for (const id of ids) {
        const r = byId.get(id)
        if (!r) continue
        let image: Uint8Array | null = null
        if (r.kind === 'image') {
          // this process's copy when it stored the file lately, else the database's; its base64 is written straight
          // into the model's request (llm/image-body.ts), not made here as a 2.7 MB string per 2 MB
          image = recent.take(id) ?? null
          if (!image) {
            const sealed = await repo.sealed(tenantId, id)
            if (!sealed) continue
            image = files.open(sealed)
          }
        }
        out.push({ id: r.id, name: r.name, content_type: r.content_type, size: Number(r.size), kind: r.kind, text: r.text, image })
      }
      return out
    },
    release: repo.release,
    byMessages: repo.byMessages,
  }
  const operatorFiles: OperatorFilesPort = {
    async claim(tenantId, sessionId, ids, messageId, trx) {
      const rows = await repo.claim(tenantId, sessionId, ids, messageId, trx as Db)
      if (rows.length !== ids.length) {
        throw new AppError(422, 'attachments_unavailable', 'An attachment is not available: upload it to this ticket and send it once', { coded: true })
      }
      const byId = new Map(rows.map((r) => [r.id, r]))
      return ids.map((id) => {
        const r = byId.get(id)!
        return { id: r.id, name: r.name, content_type: r.content_type, size: Number(r.size), kind: r.kind }
      })
    },
  }
  return {
    service,
    port,
    operatorFiles,
    routes: attachmentsRoutes({
      guards,
      attachments: service,
      visitor: deps.visitor,
      maxBytes: config.ATTACHMENT_MAX_BYTES,
      uploadsPerHour: config.ATTACHMENT_UPLOADS_PER_HOUR,
      uploadsAtOnce: config.ATTACHMENT_UPLOADS_AT_ONCE,
    }),
    jobs: attachmentsJobs({ attachments: service, retentionDays: config.ATTACHMENT_RETENTION_DAYS }),
  }
}
