import { randomUUID } from 'node:crypto'
import type { Clock } from '../../lib/clock.js'
import type { Cipher } from '../../lib/crypto.js'
import { AppError, notFound } from '../../lib/errors.js'
import type { BotScope } from '../shared/bot-scope.js'
import { redactMessage } from '../shared/redaction.js'
import type { FileCipher } from './attachments.crypto.js'
import { cleanName, concat, DOCX_TYPE, imageWithoutMetadata, sniffAttachment } from './attachments.fns.js'
import { CHUNK_BYTES, type AttachmentMeta, type AttachmentsRepo } from './attachments.repo.js'
import type { RecentImages } from './attachments.recent.js'
import { checkDocxZip } from './attachments.zip.js'

export interface AttachmentSettings {
  maxBytes: number
  maxPixels: number
  perSession: number
  /** characters of a document's text kept (the turn's budget takes less) */
  maxTextChars: number
  /** a Word file's declared decompressed size and entries */
  zip: { maxEntries: number; maxExpandedBytes: number }
}

/** The documents' parsers (worker threads, a deadline and a memory limit each), reached by a file name they read. */
export type ParseText = (filename: string, bytes: Uint8Array) => Promise<{ text: string }>

/** The largest image kept in memory from its upload to its turn (attachments.recent.ts). */
const RECENT_MAX_BYTES = 5 * 1024 * 1024

const unsupported = (why: string) =>
  new AppError(415, 'unsupported_type', `This file type is not accepted (${why}). Accepted: PNG, JPEG, WebP, GIF, PDF, DOCX, plain text.`, { coded: true })
const tooLarge = (message: string) => new AppError(413, 'file_too_large', message, { coded: true })

/** The parsers pick their reader from the name: the bytes decided the type, so the name says that type. */
const PARSE_AS: Record<string, string> = { 'application/pdf': 'attachment.pdf', [DOCX_TYPE]: 'attachment.docx', 'text/plain': 'attachment.txt' }

export function createAttachmentsService(deps: {
  clock: Clock
  repo: AttachmentsRepo
  files: FileCipher
  cipher: Pick<Cipher, 'encrypt'>
  parse: ParseText
  /** the workspace's optional PII types (redaction of a document's text, as of a message) */
  piiTypes: (tenantId: string) => Promise<readonly string[]>
  settings: AttachmentSettings
  log: { warn: (o: object, msg: string) => void }
  /** the images stored lately, kept for the turn that sends them (attachments.recent.ts) */
  recent?: RecentImages
}) {
  const { repo, files, settings } = deps

  /** A document's text as the parsers read it, bounded and redacted; null when it has none they can read. */
  async function documentText(tenantId: string, contentType: string, bytes: Uint8Array): Promise<string | null> {
    let text: string
    try {
      text = (await deps.parse(PARSE_AS[contentType]!, bytes)).text
    } catch (err) {
      deps.log.warn({ tenant_id: tenantId, err: { name: (err as Error).name } }, 'attachment text unreadable')
      return null
    }
    const bounded = text.trim().slice(0, settings.maxTextChars)
    if (!bounded) return null
    return redactMessage(bounded, await deps.piiTypes(tenantId), deps.cipher).text
  }

  async function store(
    tenantId: string,
    botId: string,
    sessionId: string,
    file: { filename: string | undefined; bytes: Uint8Array },
    id: string = randomUUID(),
  ): Promise<AttachmentMeta> {
    const bytes = file.bytes
    if (bytes.length > settings.maxBytes) throw tooLarge(`The file is larger than ${Math.round(settings.maxBytes / 1048576)} MB`)
    const s = sniffAttachment(bytes)
    if (!s.ok) throw unsupported(s.why)
    // the file as stored, in pieces (views of the upload: no copy of the whole)
    let parts: Uint8Array[] = [bytes]
    if (s.kind === 'image') {
      // a bomb: the header's size is checked before anything could decode it
      if (s.width < 1 || s.height < 1) throw unsupported('an image without a size')
      if (s.width * s.height > settings.maxPixels) {
        throw new AppError(413, 'image_too_large', `The image is too large (${s.width} x ${s.height} pixels)`, { coded: true })
      }
      const stripped = imageWithoutMetadata(bytes, s.contentType)
      if (!stripped) throw unsupported('a damaged image')
      parts = stripped
    } else if (s.contentType === DOCX_TYPE) {
      const zip = await checkDocxZip(bytes, settings.zip)
      if (!zip.ok && zip.why === 'too_large') throw tooLarge('The document expands to too much data')
      if (!zip.ok) throw unsupported(zip.why === 'not_docx' ? 'a zip archive that is not a Word document' : 'a damaged zip archive')
    }
    if ((await repo.countForSession(tenantId, sessionId)) >= settings.perSession) {
      throw new AppError(429, 'attachment_limit', `This conversation already has ${settings.perSession} files`, { coded: true })
    }
    const text = s.kind === 'document' ? await documentText(tenantId, s.contentType, bytes) : null
    const fallback = s.kind === 'image' ? `image.${s.contentType.slice(6)}` : 'document'
    const size = parts.reduce((n, p) => n + p.length, 0)
    const meta: AttachmentMeta = { id, name: cleanName(file.filename, fallback), content_type: s.contentType, size, kind: s.kind }
    // sealed a piece at a time as each is written: the event loop is never held for the whole file
    const sealed = files.sealPieces(parts, CHUNK_BYTES)
    const pieceCount = Math.ceil(size / CHUNK_BYTES)
    await repo.insert(tenantId, { ...meta, botId, sessionId, sealed, pieceCount, text, createdAt: deps.clock.now() })
    // an image the size of a screenshot is kept for the turn that sends it (one copy; a larger one is read back)
    if (s.kind === 'image' && size <= RECENT_MAX_BYTES) deps.recent?.put(meta.id, parts.length === 1 ? parts[0]! : concat(parts))
    return meta
  }

  return {
    /** A visitor's file: typed by its bytes, refused when not accepted or a bomb, metadata stripped, stored encrypted. */
    upload(tenantId: string, botId: string, sessionId: string, file: { filename: string | undefined; bytes: Uint8Array }): Promise<AttachmentMeta> {
      return store(tenantId, botId, sessionId, file)
    },
    /**
     * An inbound mail's files (issue 54), each through the same checks as a widget upload (type by bytes, caps,
     * bombs, metadata, the conversation's limit, redacted text), one at a time so that at most one file's copies
     * are held at once. What passes is stored for the mail's conversation, unsent (the turn claims it for the
     * mail's message); what does not is only listed (the mail's listing keeps name and size), its reason logged.
     * Each file is stored under the id its mail job gives it (the same on every attempt): a retried job finds what
     * an earlier attempt stored, whole, and stores only the rest, so nothing is stored twice.
     */
    async storeMailFiles(
      tenantId: string,
      botId: string,
      sessionId: string,
      mailFiles: { index: number; id: string; name: string; bytes: Uint8Array }[],
    ): Promise<{ index: number; meta: AttachmentMeta }[]> {
      const stored: { index: number; meta: AttachmentMeta }[] = []
      for (const f of mailFiles) {
        const had = await repo.stored(tenantId, f.id)
        if (had) {
          stored.push({ index: f.index, meta: had })
          continue
        }
        try {
          stored.push({ index: f.index, meta: await store(tenantId, botId, sessionId, { filename: f.name, bytes: f.bytes }, f.id) })
        } catch (err) {
          if (!(err instanceof AppError)) throw err
          deps.log.warn({ tenant_id: tenantId, code: err.code, status: err.status }, 'mail attachment listed only')
        }
      }
      return stored
    },
    /** An operator's file for their reply (issue 54): the ticket's conversation, within the member's bots (404 otherwise). */
    async operatorUpload(tenantId: string, ticketId: string, scope: BotScope, file: { filename: string | undefined; bytes: Uint8Array }) {
      const t = await repo.ticketSession(tenantId, ticketId, scope)
      if (!t) throw notFound('Ticket not found')
      if (!t.session_id || !t.bot_id) throw new AppError(409, 'no_conversation', 'This ticket has no conversation', { coded: true })
      return store(tenantId, t.bot_id, t.session_id, file)
    },
    /** The files these messages sent, decrypted, as a mail attaches them (the mailer reads them when it sends). */
    async mailAttachments(tenantId: string, messageIds: readonly string[]) {
      const rows = await repo.filesOfMessages(tenantId, messageIds)
      return rows.map((r) => ({ filename: r.name, contentType: r.content_type, content: files.open(r.data) }))
    },
    /** The file for the visitor (their session) or a member (bots in scope); 404 otherwise. */
    async file(tenantId: string, id: string, where: { sessionId: string } | { scope: BotScope }) {
      const row = await repo.findFile(tenantId, id, where)
      if (!row) throw notFound('Attachment not found')
      return { meta: { id: row.id, name: row.name, content_type: row.content_type, size: Number(row.size), kind: row.kind }, bytes: files.open(row.data) }
    },

    byMessages: repo.byMessages,
    takeBack: repo.takeBack,
    usage: repo.usage,
    deleteExpired: (retentionDays: number) => repo.deleteExpired(deps.clock.now(), retentionDays),
  }
}

export type AttachmentsService = ReturnType<typeof createAttachmentsService>
