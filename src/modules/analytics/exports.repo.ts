import { sql, type Selectable } from 'kysely'
import type { Db } from '../../db/client.js'
import type { BotScope } from '../shared/bot-scope.js'
import type { AnalyticsExportsTable, ExportFormat, ExportKind } from '../../db/schema/analytics.js'

export type ExportRow = Selectable<AnalyticsExportsTable>

/** Rows of one export, read a page at a time after a keyset position (never OFFSET, never the whole range). */
export interface ExportScope {
  start: Date
  end: Date
  botIds: readonly string[] | null
}
export interface Keyset {
  at: Date
  id: string
}

const botsIn = (col: string, botIds: readonly string[]) =>
  sql<boolean>`${sql.ref(col)} IN (SELECT x::uuid FROM jsonb_array_elements_text(${JSON.stringify(botIds)}::jsonb) x)`

// bot_ids <@ scope: every bot of the export is in the scope; a null bot_ids (all bots) never is.
const withinScope = (scope: BotScope) =>
  scope === null ? sql<boolean>`true` : sql<boolean>`(bot_ids IS NOT NULL AND bot_ids <@ ${JSON.stringify([...scope])}::jsonb)`

export function createExportsRepo(db: Db) {
  return {
    insert(
      tenantId: string,
      e: { kind: ExportKind; format: ExportFormat; from: string; to: string; tz: string; botIds: string[] | null; createdBy: string | null; now: Date },
      trx: Db = db,
    ) {
      return trx
        .insertInto('analytics_exports')
        .values({
          tenant_id: tenantId,
          kind: e.kind,
          format: e.format,
          range_from: e.from,
          range_to: e.to,
          tz: e.tz,
          bot_ids: e.botIds ? JSON.stringify(e.botIds) : null,
          file_name: null,
          error: null,
          created_by: e.createdBy,
          created_at: e.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
    },

    /** One export the caller may see: with a bot scope, only one whose bots are all within it (an all-bot export never is). */
    find(tenantId: string, id: string, scope: BotScope = null) {
      return db.selectFrom('analytics_exports').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).where(withinScope(scope)).executeTakeFirst()
    },

    list(tenantId: string, limit: number, scope: BotScope = null) {
      return db
        .selectFrom('analytics_exports')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where(withinScope(scope))
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(limit)
        .execute()
    },

    async update(
      tenantId: string,
      id: string,
      set: Partial<Pick<ExportRow, 'status' | 'progress' | 'rows' | 'file_name' | 'error' | 'finished_at' | 'expires_at'>>,
    ) {
      await db.updateTable('analytics_exports').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
    },

    /** The workspace's optional PII types (operator text in an export is redacted as visitor text is). */
    async optionalPiiTypes(tenantId: string): Promise<string[]> {
      const t = await db.selectFrom('tenants').select('pii_optional_types').where('id', '=', tenantId).executeTakeFirst()
      return (t?.pii_optional_types as string[] | null) ?? []
    },

    /** Files whose link has expired (across tenants: the sweep's view). */
    expiredFiles(now: Date, limit: number) {
      return db
        .selectFrom('analytics_exports')
        .select(['id', 'tenant_id', 'file_name'])
        .where('file_name', 'is not', null)
        .where('expires_at', '<=', now)
        .limit(limit)
        .execute()
    },

    async count(tenantId: string, kind: ExportKind, s: ExportScope): Promise<number> {
      const r = await page(db, tenantId, kind, s, null, null)
      return r
    },

    /** One page of the export's rows after `after`, in (time, id) order. */
    rows(tenantId: string, kind: ExportKind, s: ExportScope, after: Keyset | null, limit: number) {
      return page(db, tenantId, kind, s, after, limit)
    },
  }
}

// Each kind's query; with limit null it counts instead.
function page(db: Db, tenantId: string, kind: ExportKind, s: ExportScope, after: Keyset | null, limit: null): Promise<number>
function page(db: Db, tenantId: string, kind: ExportKind, s: ExportScope, after: Keyset | null, limit: number): Promise<Record<string, unknown>[]>
async function page(db: Db, tenantId: string, kind: ExportKind, s: ExportScope, after: Keyset | null, limit: number | null): Promise<unknown> {
  const spec = {
    conversations: { from: sql`analytics_conversations c`, at: 'c.started_at', id: 'c.session_id', bot: 'c.bot_id', tenant: 'c.tenant_id' },
    messages: {
      from: sql`chat_messages m JOIN chat_sessions s ON s.id = m.session_id`,
      at: 'm.created_at',
      id: 'm.id',
      bot: 's.bot_id',
      tenant: 'm.tenant_id',
    },
    tickets: { from: sql`escalation_tickets t`, at: 't.created_at', id: 't.id', bot: 't.bot_id', tenant: 't.tenant_id' },
    questions: { from: sql`question_log q`, at: 'q.created_at', id: 'q.id', bot: 'q.bot_id', tenant: 'q.tenant_id' },
  }[kind]
  const conds = [sql`${sql.ref(spec.tenant)} = ${tenantId}::uuid`, sql`${sql.ref(spec.at)} >= ${s.start}`, sql`${sql.ref(spec.at)} < ${s.end}`]
  if (s.botIds) conds.push(botsIn(spec.bot, s.botIds))
  if (after) conds.push(sql`(${sql.ref(spec.at)}, ${sql.ref(spec.id)}) > (${after.at}, ${after.id}::uuid)`)
  const where = sql.join(conds, sql` AND `)
  if (limit === null) {
    const r = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${spec.from} WHERE ${where}`.execute(db)
    return r.rows[0]?.n ?? 0
  }
  const cols = {
    conversations: sql`c.session_id AS id, c.started_at AS at, c.bot_id, c.channel, c.started_at, c.last_message_at, c.messages, c.questions, c.outcome,
      c.tickets, c.first_response_s, c.resolve_s, c.bot_up, c.bot_down, c.op_up, c.op_down, c.tokens,
      (SELECT s.language FROM chat_sessions s WHERE s.tenant_id = c.tenant_id AND s.id = c.session_id) AS language`,
    messages: sql`m.id, m.created_at AS at, m.session_id, s.bot_id, s.channel, m.created_at, m.role, m.from_operator, m.content, m.feedback, m.tokens_used,
      (m.debug->'timings'->>'model')::float8 AS model_ms`,
    tickets: sql`t.id, t.created_at AS at, t.ticket_number, t.session_id, t.bot_id, t.status, t.priority, t.trigger, t.primary_question, t.created_at,
      (SELECT min(r.created_at) FROM operator_replies r WHERE r.tenant_id = t.tenant_id AND r.ticket_id = t.id) AS first_reply_at, t.resolved_at,
      (SELECT s.language FROM chat_sessions s WHERE s.tenant_id = t.tenant_id AND s.id = t.session_id) AS language`,
    questions: sql`q.id, q.created_at AS at, q.session_id, q.bot_id, q.message_id, q.question, q.outcome, q.trigger, q.best_score, q.feedback, q.created_at`,
  }[kind]
  const r = await sql<
    Record<string, unknown>
  >`SELECT ${cols} FROM ${spec.from} WHERE ${where} ORDER BY ${sql.ref(spec.at)}, ${sql.ref(spec.id)} LIMIT ${limit}`.execute(db)
  return r.rows
}

export type ExportsRepo = ReturnType<typeof createExportsRepo>
