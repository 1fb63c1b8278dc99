import { sql, type Selectable } from 'kysely'
import { NoticeCache, type ChangeFeed } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { ActionCallsTable, ActionParameter, ActionsTable, CallStatus } from '../../db/schema/actions.js'
import { conflict } from '../../lib/errors.js'

export type ActionRow = Selectable<ActionsTable>
export type CallRow = Selectable<ActionCallsTable>

/** An action as stored, without its id and times (the service builds it). */
export interface ActionData {
  name: string
  description: string
  method: ActionRow['method']
  url: string
  headers: Record<string, string>
  body_template: string | null
  parameters: ActionParameter[]
  kind: ActionRow['kind']
  bot_ids: string[] | null
  enabled: boolean
  response_fields: string[]
  timeout_ms: number
  secrets_enc: string | null
  secret_hints: Record<string, string>
}

export interface NewCall {
  actionId: string
  sessionId: string | null
  botId: string | null
  status: CallStatus
  arguments: Record<string, unknown>
  argumentsEnc: string | null
  summary: string
  now: Date
}

export interface CallOutcome {
  status: CallStatus
  httpStatus: number | null
  latencyMs: number | null
  responseExcerpt: string | null
  error: string | null
}

const jsonOf = (d: Partial<ActionData>) => {
  const { headers, parameters, bot_ids, response_fields, secret_hints, ...rest } = d
  return {
    ...rest,
    ...(headers !== undefined ? { headers: JSON.stringify(headers) } : {}),
    ...(parameters !== undefined ? { parameters: JSON.stringify(parameters) } : {}),
    ...(bot_ids !== undefined ? { bot_ids: bot_ids === null ? null : JSON.stringify(bot_ids) } : {}),
    ...(response_fields !== undefined ? { response_fields: JSON.stringify(response_fields) } : {}),
    ...(secret_hints !== undefined ? { secret_hints: JSON.stringify(secret_hints) } : {}),
  }
}

const duplicate = (err: unknown) => (isUniqueViolation(err) ? conflict('An action with this name exists already', 'action_name_taken') : err)

/** Announced (key: the tenant id) by every write of an action, so the turn's cached list is dropped everywhere. */
export const ACTIONS_TOPIC = 'actions'

/** Whether an enabled action is for this bot (no bot list: every bot), as the SQL of forBot said. */
const forThisBot = (a: ActionRow, botId: string) => a.bot_ids === null || (Array.isArray(a.bot_ids) && a.bot_ids.includes(botId))

/**
 * Actions, their calls and the workspace's action secret; every method takes the tenant id first.
 * With a change feed, a turn's read of the tenant's enabled actions (every turn offers them as tools) comes from
 * a cache kept coherent by ACTIONS_TOPIC notices instead of a query per turn.
 */
export function createActionsRepo(db: Db, changes?: ChangeFeed, clock?: { now(): Date }) {
  const enabledCache = changes ? new NoticeCache<ActionRow[]>(changes, ACTIONS_TOPIC, { ttlMs: 60_000, max: 10_000, clock }) : null
  const announce = async (trx: Db, tenantId: string) => {
    await changes?.announce(trx, ACTIONS_TOPIC, tenantId)
  }
  const enabledOf = (tenantId: string) =>
    db.selectFrom('actions').selectAll().where('tenant_id', '=', tenantId).where('enabled', '=', true).orderBy('created_at').execute()

  return {
    list(tenantId: string) {
      return db.selectFrom('actions').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute()
    },

    find(tenantId: string, id: string) {
      return db.selectFrom('actions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
    },

    count(tenantId: string) {
      return db
        .selectFrom('actions')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },

    /** The enabled actions a bot may use (those for every bot, and those naming it). */
    async forBot(tenantId: string, botId: string) {
      const rows = enabledCache ? await enabledCache.get(tenantId, () => enabledOf(tenantId)) : await enabledOf(tenantId)
      return rows.filter((a) => forThisBot(a, botId))
    },

    async insert(tenantId: string, d: ActionData, now: Date, trx: Db = db) {
      try {
        return await trx
          .insertInto('actions')
          .values({ tenant_id: tenantId, ...(jsonOf(d) as Required<ReturnType<typeof jsonOf>>), created_at: now, updated_at: now } as never)
          .returningAll()
          .executeTakeFirstOrThrow()
          .then(async (row) => {
            await announce(trx, tenantId)
            return row
          })
      } catch (err) {
        throw duplicate(err)
      }
    },

    async update(tenantId: string, id: string, d: Partial<ActionData>, now: Date) {
      try {
        return await db
          .updateTable('actions')
          .set({ ...jsonOf(d), updated_at: now } as never)
          .where('tenant_id', '=', tenantId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst()
          .then(async (row) => {
            await announce(db, tenantId)
            return row
          })
      } catch (err) {
        throw duplicate(err)
      }
    },

    async remove(tenantId: string, id: string): Promise<boolean> {
      const r = await db.deleteFrom('actions').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
      await announce(db, tenantId)
      return Number(r.numDeletedRows) > 0
    },

    insertCall(tenantId: string, c: NewCall, trx: Db = db) {
      return trx
        .insertInto('action_calls')
        .values({
          tenant_id: tenantId,
          action_id: c.actionId,
          session_id: c.sessionId,
          bot_id: c.botId,
          status: c.status,
          http_status: null,
          latency_ms: null,
          arguments: JSON.stringify(c.arguments),
          arguments_enc: c.argumentsEnc,
          summary: c.summary,
          response_excerpt: null,
          error: null,
          created_at: c.now,
          updated_at: c.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
    },

    finishCall(tenantId: string, id: string, o: CallOutcome, now: Date, trx: Db = db) {
      return trx
        .updateTable('action_calls')
        .set({
          status: o.status,
          http_status: o.httpStatus,
          latency_ms: o.latencyMs,
          response_excerpt: o.responseExcerpt,
          error: o.error,
          arguments_enc: null,
          updated_at: now,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .execute()
    },

    /**
     * Moves a pending call of this session to `to` (running: approved; cancelled) in one statement, so two
     * approvals arriving together (a double click) find one winner and the other nothing.
     */
    takePending(tenantId: string, id: string, sessionId: string, to: 'running' | 'cancelled', now: Date, notBefore: Date) {
      return db
        .updateTable('action_calls')
        .set({ status: to, updated_at: now, ...(to === 'cancelled' ? { arguments_enc: null } : {}) })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('session_id', '=', sessionId)
        .where('status', '=', 'pending')
        .where('created_at', '>', notBefore)
        .returningAll()
        .executeTakeFirst()
    },

    /** A pending call whose approval came too late: cancelled, so it can never run. */
    expirePending(tenantId: string, id: string, now: Date) {
      return db
        .updateTable('action_calls')
        .set({ status: 'cancelled', error: 'approval expired', arguments_enc: null, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .execute()
    },

    findCall(tenantId: string, id: string) {
      return db.selectFrom('action_calls').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
    },

    listCalls(tenantId: string, actionId: string, q: { before?: string; limit: number }) {
      let query = db
        .selectFrom('action_calls')
        .select(['id', sql<string>`seq::text`.as('seq'), 'session_id', 'status', 'http_status', 'latency_ms', 'arguments', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('action_id', '=', actionId)
      if (q.before) query = query.where('seq', '<', q.before)
      return query.orderBy('seq', 'desc').limit(q.limit).execute()
    },

    /** The calls of one conversation, oldest first, with their action's name (null once the action is deleted). */
    sessionCalls(tenantId: string, sessionId: string, limit: number) {
      return db
        .selectFrom('action_calls as c')
        .leftJoin('actions as a', (j) => j.onRef('a.id', '=', 'c.action_id').onRef('a.tenant_id', '=', 'c.tenant_id'))
        .select(['c.id', 'a.name', 'c.status', 'c.http_status', 'c.latency_ms', 'c.arguments', 'c.created_at'])
        .where('c.tenant_id', '=', tenantId)
        .where('c.session_id', '=', sessionId)
        .orderBy('c.seq')
        .limit(limit)
        .execute()
    },

    findSecret(tenantId: string) {
      return db.selectFrom('action_settings').select('secret_enc').where('tenant_id', '=', tenantId).executeTakeFirst()
    },

    /** Sets the secret (replace: a rotation) or keeps the one there (first use); returns the stored one. */
    async putSecret(tenantId: string, secretEnc: string, now: Date, replace: boolean): Promise<string> {
      const row = await db
        .insertInto('action_settings')
        .values({ tenant_id: tenantId, secret_enc: secretEnc, created_at: now, updated_at: now })
        .onConflict((oc) => (replace ? oc.column('tenant_id').doUpdateSet({ secret_enc: secretEnc, updated_at: now }) : oc.column('tenant_id').doNothing()))
        .returning('secret_enc')
        .executeTakeFirst()
      return (
        row?.secret_enc ?? (await db.selectFrom('action_settings').select('secret_enc').where('tenant_id', '=', tenantId).executeTakeFirstOrThrow()).secret_enc
      )
    },

    ownBots(tenantId: string, ids: string[]) {
      if (!ids.length) return Promise.resolve(new Set<string>())
      return db
        .selectFrom('bots')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('id', 'in', ids)
        .execute()
        .then((rows) => new Set(rows.map((r) => r.id)))
    },
  }
}

export type ActionsRepo = ReturnType<typeof createActionsRepo>
