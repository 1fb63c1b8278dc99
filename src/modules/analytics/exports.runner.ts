import { createWriteStream } from 'node:fs'
import { mkdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { stringify } from 'csv-stringify'
import type { Logger } from 'pino'
import type { ExportKind } from '../../db/schema/analytics.js'
import type { Clock } from '../../lib/clock.js'
import { localMidnight, neutraliseCell, nextDay, outcomeAt, type FinalOutcome } from './analytics.fns.js'
import type { ExportRow, ExportsRepo, Keyset } from './exports.repo.js'
import { redactOperatorText } from '../shared/redaction.js'

/** A download link lives this long after the export finished; the sweep deletes the file then. */
export const EXPORT_TTL_MS = 24 * 3600 * 1000
const PAGE = 1000
const iso = (v: unknown) => (v == null ? null : (v instanceof Date ? v : new Date(String(v))).toISOString())
const num = (v: unknown) => (v == null ? null : Number(v))

/** The columns of each kind, in file order, from one database row (text is always the redacted text). */
export const EXPORT_COLUMNS: Record<ExportKind, readonly string[]> = {
  conversations: [
    'session_id',
    'bot_id',
    'channel',
    'started_at',
    'last_message_at',
    'messages',
    'questions',
    'outcome',
    'tickets',
    'first_response_s',
    'resolve_s',
    'bot_feedback_up',
    'bot_feedback_down',
    'operator_feedback_up',
    'operator_feedback_down',
    'tokens',
    // the conversation's language once known (#40), last so existing columns keep their places
    'language',
  ],
  messages: ['message_id', 'session_id', 'bot_id', 'channel', 'created_at', 'role', 'content', 'feedback', 'tokens', 'model_ms'],
  tickets: [
    'ticket_id',
    'ticket_number',
    'session_id',
    'bot_id',
    'status',
    'priority',
    'trigger',
    'question',
    'created_at',
    'first_response_at',
    'resolved_at',
    'language',
  ],
  questions: ['question_id', 'session_id', 'bot_id', 'message_id', 'question', 'outcome', 'trigger', 'best_score', 'feedback', 'created_at'],
}

/** `optional`: the workspace's optional PII types, for operator-written text (visitor text is stored redacted). */
export function presentRow(kind: ExportKind, r: Record<string, unknown>, now: Date, optional: readonly string[] = []): Record<string, unknown> {
  switch (kind) {
    case 'conversations':
      return {
        session_id: r.id,
        bot_id: r.bot_id,
        channel: r.channel,
        started_at: iso(r.started_at),
        last_message_at: iso(r.last_message_at),
        messages: num(r.messages),
        questions: num(r.questions),
        outcome: outcomeAt({ lastMessageAt: new Date(r.last_message_at as Date), outcome: r.outcome as FinalOutcome }, now),
        tickets: num(r.tickets),
        first_response_s: num(r.first_response_s),
        resolve_s: num(r.resolve_s),
        bot_feedback_up: num(r.bot_up),
        bot_feedback_down: num(r.bot_down),
        operator_feedback_up: num(r.op_up),
        operator_feedback_down: num(r.op_down),
        tokens: num(r.tokens),
        language: r.language ?? null,
      }
    case 'messages':
      return {
        message_id: r.id,
        session_id: r.session_id,
        bot_id: r.bot_id,
        channel: r.channel,
        created_at: iso(r.created_at),
        role: r.from_operator ? 'operator' : r.role,
        content: r.from_operator && typeof r.content === 'string' ? redactOperatorText(r.content, optional) : r.content,
        feedback: r.feedback,
        tokens: num(r.tokens_used),
        model_ms: num(r.model_ms),
      }
    case 'tickets': {
      const firsts = [r.first_reply_at, r.resolved_at].filter((d) => d != null).map((d) => new Date(d as Date).getTime())
      return {
        ticket_id: r.id,
        ticket_number: r.ticket_number,
        session_id: r.session_id,
        bot_id: r.bot_id,
        status: r.status,
        priority: r.priority,
        trigger: r.trigger,
        question: r.primary_question,
        created_at: iso(r.created_at),
        first_response_at: firsts.length ? new Date(Math.min(...firsts)).toISOString() : null,
        resolved_at: iso(r.resolved_at),
        language: r.language ?? null,
      }
    }
    case 'questions':
      return {
        question_id: r.id,
        session_id: r.session_id,
        bot_id: r.bot_id,
        message_id: r.message_id,
        question: r.question,
        outcome: r.outcome,
        trigger: r.trigger,
        best_score: num(r.best_score),
        feedback: r.feedback,
        created_at: iso(r.created_at),
      }
  }
}

export const exportFileName = (e: Pick<ExportRow, 'id' | 'format'>) => `${e.id}.${e.format === 'csv' ? 'csv' : 'jsonl'}`

/**
 * Runs an export: pages of rows by keyset, through csv-stringify (or JSON lines) into a file written with
 * back-pressure, so memory stays flat whatever the row count. The file is written under a temporary name
 * and renamed at the end; a second run of the same export starts the file again, a finished one is left.
 */
export function createExportRunner(deps: {
  repo: ExportsRepo
  clock: Clock
  log: Pick<Logger, 'warn' | 'info'>
  dir: string
  /** Brings the conversation facts up to date (the conversations export reads them, not the messages). */
  refresh?: () => Promise<unknown>
}) {
  const { repo, clock } = deps
  const dirOf = (tenantId: string) => join(deps.dir, tenantId)

  async function* rowsOf(e: ExportRow, total: number, signal?: AbortSignal): AsyncGenerator<Record<string, unknown>> {
    const scope = { start: localMidnight(e.range_from, e.tz), end: localMidnight(nextDay(e.range_to), e.tz), botIds: e.bot_ids }
    let after: Keyset | null = null
    let done = 0
    let pages = 0
    const optional = e.kind === 'messages' ? await repo.optionalPiiTypes(e.tenant_id) : []
    for (;;) {
      if (signal?.aborted) throw new Error('export interrupted')
      const rows = await repo.rows(e.tenant_id, e.kind, scope, after, PAGE)
      const now = clock.now()
      for (const r of rows) yield presentRow(e.kind, r, now, optional)
      done += rows.length
      if (rows.length < PAGE) break
      const last = rows[rows.length - 1]!
      after = { at: new Date(last.at as Date), id: String(last.id) }
      if (++pages % 5 === 0) await repo.update(e.tenant_id, e.id, { progress: Math.min(0.99, total ? done / total : 0), rows: done })
    }
  }

  return {
    async run(tenantId: string, exportId: string, lastAttempt: boolean, signal?: AbortSignal): Promise<void> {
      const e = await repo.find(tenantId, exportId)
      if (!e || e.status === 'done' || e.status === 'failed') return
      await repo.update(tenantId, exportId, { status: 'running', progress: 0, rows: 0 })
      const dir = dirOf(tenantId)
      const name = exportFileName(e)
      const part = join(dir, `${name}.part`)
      try {
        await mkdir(dir, { recursive: true })
        if (e.kind === 'conversations') await deps.refresh?.()
        const scope = { start: localMidnight(e.range_from, e.tz), end: localMidnight(nextDay(e.range_to), e.tz), botIds: e.bot_ids }
        const total = await repo.count(tenantId, e.kind, scope)
        let rows = 0
        const counted = async function* (src: AsyncGenerator<Record<string, unknown>>) {
          for await (const r of src) {
            rows++
            yield r
          }
        }
        const source = Readable.from(counted(rowsOf(e, total, signal)))
        const columns = [...EXPORT_COLUMNS[e.kind]]
        const encode =
          e.format === 'csv'
            ? stringify({ header: true, columns, cast: { string: (v) => String(neutraliseCell(v)) } })
            : new Transform({ objectMode: true, transform: (row, _enc, cb) => cb(null, `${JSON.stringify(row)}\n`) })
        await pipeline(source, encode, createWriteStream(part))
        await rename(part, join(dir, name))
        const now = clock.now()
        await repo.update(tenantId, exportId, {
          status: 'done',
          progress: 1,
          rows,
          file_name: name,
          finished_at: now,
          expires_at: new Date(now.getTime() + EXPORT_TTL_MS),
        })
        deps.log.info({ tenantId, exportId, kind: e.kind, rows }, 'export written')
      } catch (err) {
        await rm(part, { force: true })
        deps.log.warn({ tenantId, exportId, err: { message: (err as Error).message.slice(0, 200) } }, 'export failed')
        if (lastAttempt) {
          await repo.update(tenantId, exportId, { status: 'failed', error: 'export failed', finished_at: clock.now() })
          return
        }
        await repo.update(tenantId, exportId, { status: 'queued' })
        throw err
      }
    },

    filePath: (tenantId: string, fileName: string) => join(dirOf(tenantId), fileName),

    /** Deletes the files whose links expired (the rows stay, answering 410 on download). */
    async sweep(): Promise<number> {
      let n = 0
      for (;;) {
        const due = await repo.expiredFiles(clock.now(), 200)
        for (const d of due) {
          await rm(join(dirOf(d.tenant_id), d.file_name!), { force: true })
          await repo.update(d.tenant_id, d.id, { file_name: null })
          n++
        }
        if (due.length < 200) return n
      }
    },
  }
}

export type ExportRunner = ReturnType<typeof createExportRunner>
