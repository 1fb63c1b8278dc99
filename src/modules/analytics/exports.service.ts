import { stat } from 'node:fs/promises'
import type { Db } from '../../db/client.js'
import type { ExportFormat, ExportKind } from '../../db/schema/analytics.js'
import type { JobQueue } from '../../jobs/queue.js'
import type { Clock } from '../../lib/clock.js'
import { AppError, notFound, ValidationError } from '../../lib/errors.js'
import type { AuditPort } from '../shared/audit.port.js'
import { resolveRange } from './analytics.fns.js'
import type { AnalyticsRepo } from './analytics.repo.js'
import type { BotScope } from './analytics.service.js'
import type { ExportRow, ExportsRepo } from './exports.repo.js'
import type { ExportRunner } from './exports.runner.js'

export interface ExportInput {
  kind: ExportKind
  format: ExportFormat
  from: string
  to: string
  bot_ids?: string[]
  tz?: string
}

const gone = () => new AppError(410, 'export_expired', 'This export has expired; start a new one', { coded: true })

/** POST /exports, GET /exports/{id}, GET /exports/{id}/download: the rules; the job writes the file. */
export function createExportsService(deps: {
  db: Db
  clock: Clock
  queue: JobQueue
  audit: AuditPort
  repo: ExportsRepo
  bots: Pick<AnalyticsRepo, 'knownBots'>
  runner: Pick<ExportRunner, 'filePath'>
}) {
  const { db, clock, queue, repo } = deps

  function present(e: ExportRow) {
    const now = clock.now()
    const expired = e.status === 'done' && (!e.file_name || (e.expires_at !== null && e.expires_at <= now))
    return {
      id: e.id,
      kind: e.kind,
      format: e.format,
      status: e.status,
      progress: Math.round(e.progress * 1000) / 1000,
      rows: e.rows,
      download_url: e.status === 'done' && !expired ? `/exports/${e.id}/download` : null,
      expires_at: e.expires_at ? e.expires_at.toISOString() : null,
      from: e.range_from,
      to: e.range_to,
      created_at: e.created_at.toISOString(),
      expired,
    }
  }

  async function exportOr404(tenantId: string, id: string, scope: BotScope) {
    const e = await repo.find(tenantId, id, scope)
    if (!e) throw notFound('Export not found')
    return e
  }

  return {
    present,

    async create(tenantId: string, input: ExportInput, actor: { userId: string | null; ip: string | null }, scope: BotScope) {
      const tz = input.tz ?? 'UTC'
      const range = resolveRange(input.from, input.to, tz)
      if ('field' in range) throw new ValidationError(['body', range.field], range.message)
      let botIds: string[] | null = scope ? [...scope] : null
      if (input.bot_ids?.length) {
        if (scope && input.bot_ids.some((b) => !scope.includes(b))) throw notFound('Bot not found')
        const known = await deps.bots.knownBots(tenantId, input.bot_ids)
        if (known.length !== input.bot_ids.length) throw notFound('Bot not found')
        botIds = [...input.bot_ids]
      }
      const now = clock.now()
      const row = await db.transaction().execute(async (trx) => {
        const e = await repo.insert(
          tenantId,
          { kind: input.kind, format: input.format, from: input.from, to: input.to, tz, botIds, createdBy: actor.userId, now },
          trx,
        )
        await queue.enqueue('analytics.export', { tenantId, exportId: e.id }, { tenantId, dedupeKey: `export:${e.id}`, maxAttempts: 3 }, trx)
        await deps.audit.record(
          tenantId,
          {
            actorUserId: actor.userId,
            ip: actor.ip,
            action: 'exported',
            itemType: 'export',
            itemId: e.id,
            detail: { kind: input.kind, format: input.format, from: input.from, to: input.to, tz, bot_ids: botIds },
          },
          trx,
        )
        return e
      })
      return { id: row.id, status: row.status }
    },

    /** A member limited to some bots sees only exports whose bots are all theirs; any other is a 404. */
    async get(tenantId: string, id: string, scope: BotScope) {
      return present(await exportOr404(tenantId, id, scope))
    },

    async list(tenantId: string, scope: BotScope) {
      return { items: (await repo.list(tenantId, 20, scope)).map(present) }
    },

    /** The finished file to stream; 404 unknown or not finished, 410 once the link has expired. */
    async download(tenantId: string, id: string, scope: BotScope) {
      const e = await exportOr404(tenantId, id, scope)
      if (e.status !== 'done') throw new AppError(409, 'export_not_ready', `This export is ${e.status}`, { coded: true })
      if (!e.file_name || (e.expires_at && e.expires_at <= clock.now())) throw gone()
      const path = deps.runner.filePath(tenantId, e.file_name)
      const size = await stat(path).then(
        (s) => s.size,
        () => null,
      )
      if (size === null) throw gone()
      return {
        path,
        size,
        contentType: e.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
        fileName: `${e.kind}-${e.range_from}-${e.range_to}.${e.format === 'csv' ? 'csv' : 'jsonl'}`,
      }
    },
  }
}

export type ExportsService = ReturnType<typeof createExportsService>
