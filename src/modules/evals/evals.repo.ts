import { sql, type Selectable } from 'kysely'
import type { Db } from '../../db/client.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { EvalCasesTable, EvalExpect, EvalPins, EvalResult, EvalRunsTable, EvalTotals } from '../../db/schema/evals.js'
import { conflict } from '../../lib/errors.js'

export type CaseRow = Selectable<EvalCasesTable>
export type RunRow = Selectable<EvalRunsTable>

export interface CaseValues {
  bot_id: string | null
  question: string
  turns: string[] | null
  visitor_claims: Record<string, unknown> | null
  expect: EvalExpect
  tags: string[]
}

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v))

/** The most cases a run asks (and a list shows): a run that would ask more is refused, never cut silently. */
export const CASES_MAX = 1000

export interface CaseFilter {
  tags?: string[] | null
  botId?: string | null
}

/** Evaluation cases, runs and results; every method is scoped by tenant. */
export function createEvalsRepo(db: Db) {
  const casesWhere = (tenantId: string, filter: CaseFilter) => {
    let q = db.selectFrom('eval_cases').where('tenant_id', '=', tenantId)
    if (filter.tags?.length) q = q.where(sql<boolean>`tags ?| ${sql.val(filter.tags)}::text[]`)
    if (filter.botId) q = q.where((eb) => eb.or([eb('bot_id', 'is', null), eb('bot_id', '=', filter.botId!)]))
    return q
  }
  return {
    insertCases(tenantId: string, cases: CaseValues[], now: Date, trx: Db = db) {
      if (!cases.length) return Promise.resolve([])
      return trx
        .insertInto('eval_cases')
        .values(
          cases.map((c) => ({
            tenant_id: tenantId,
            bot_id: c.bot_id,
            question: c.question,
            turns: json(c.turns),
            visitor_claims: json(c.visitor_claims),
            expect: JSON.stringify(c.expect),
            tags: JSON.stringify(c.tags),
            created_at: now,
            updated_at: now,
          })),
        )
        .returningAll()
        .execute()
    },

    findCase(tenantId: string, id: string) {
      return db.selectFrom('eval_cases').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
    },

    /** Cases in creation order; with `tags`, those carrying any of them; with a bot, its own and the bot-less ones. */
    listCases(tenantId: string, filter: CaseFilter = {}) {
      return casesWhere(tenantId, filter).selectAll().orderBy('created_at').orderBy('id').limit(CASES_MAX).execute()
    },

    /**
     * One page of the cases a member sees, in creation order, strictly after `after` (keyset: created_at, id),
     * and how many there are in all. The bot scope is SQL so the page and the total agree for a limited member:
     * its bots' cases and the bot-less (shared) ones.
     */
    async pageCases(tenantId: string, q: { tags: string[] | null; scope: readonly string[] | null; after?: { at: Date; id: string }; limit: number }) {
      let base = casesWhere(tenantId, { tags: q.tags })
      if (q.scope !== null) {
        const bots = q.scope
        base = base.where((eb) => (bots.length ? eb.or([eb('bot_id', 'is', null), eb('bot_id', 'in', bots)]) : eb('bot_id', 'is', null)))
      }
      let page = base.selectAll()
      if (q.after) {
        const { at, id } = q.after
        page = page.where((eb) => eb.or([eb('created_at', '>', at), eb.and([eb('created_at', '=', at), eb('id', '>', id)])]))
      }
      const [rows, count] = await Promise.all([
        page.orderBy('created_at').orderBy('id').limit(q.limit).execute(),
        base.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
      ])
      return { rows, total: Number(count.n) }
    },

    /** How many cases a run with this filter would ask, counted up to `upTo` (a run refuses more than CASES_MAX). */
    async countCases(tenantId: string, filter: CaseFilter, upTo: number) {
      const rows = await casesWhere(tenantId, filter).select('id').limit(upTo).execute()
      return rows.length
    },

    updateCase(tenantId: string, id: string, c: CaseValues, now: Date) {
      return db
        .updateTable('eval_cases')
        .set({
          bot_id: c.bot_id,
          question: c.question,
          turns: json(c.turns),
          visitor_claims: json(c.visitor_claims),
          expect: JSON.stringify(c.expect),
          tags: JSON.stringify(c.tags),
          updated_at: now,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst()
    },

    async deleteCase(tenantId: string, id: string) {
      const r = await db.deleteFrom('eval_cases').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    },

    /** A new queued run; a second while one is queued or running is a 409 (the partial unique index decides). */
    async insertRun(
      tenantId: string,
      r: { botId: string | null; tags: string[] | null; repeat: number; createdBy: string | null; trigger?: 'manual' | 'auto'; now: Date },
      trx: Db = db,
    ) {
      try {
        return await trx
          .insertInto('eval_runs')
          .values({
            tenant_id: tenantId,
            bot_id: r.botId,
            tags: json(r.tags),
            repeat: r.repeat,
            error: null,
            created_by: r.createdBy,
            created_at: r.now,
            trigger: r.trigger ?? 'manual',
          })
          .returningAll()
          .executeTakeFirstOrThrow()
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict('An evaluation run is already in progress in this workspace', 'eval_run_in_progress')
        throw err
      }
    },

    findRun(tenantId: string, id: string) {
      return db.selectFrom('eval_runs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
    },

    listRuns(tenantId: string, limit = 50) {
      return db.selectFrom('eval_runs').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at', 'desc').orderBy('id').limit(limit).execute()
    },

    async updateRun(
      tenantId: string,
      id: string,
      patch: Partial<{
        status: RunRow['status']
        progress: number
        partial: boolean
        pins: EvalPins
        totals: EvalTotals
        tokens: number
        error: string | null
        finishedAt: Date
      }>,
    ) {
      await db
        .updateTable('eval_runs')
        .set({
          ...(patch.status ? { status: patch.status } : {}),
          ...(patch.progress !== undefined ? { progress: patch.progress } : {}),
          ...(patch.partial !== undefined ? { partial: patch.partial } : {}),
          ...(patch.pins ? { pins: JSON.stringify(patch.pins) } : {}),
          ...(patch.totals ? { totals: JSON.stringify(patch.totals) } : {}),
          ...(patch.tokens !== undefined ? { tokens: patch.tokens } : {}),
          ...(patch.error !== undefined ? { error: patch.error } : {}),
          ...(patch.finishedAt ? { finished_at: patch.finishedAt } : {}),
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .execute()
    },

    /** A case's result; written again when a retried job reaches the same case. */
    async upsertResult(tenantId: string, runId: string, position: number, result: EvalResult) {
      await db
        .insertInto('eval_results')
        .values({ run_id: runId, tenant_id: tenantId, case_id: result.case_id, position, result: JSON.stringify(result) })
        .onConflict((oc) => oc.columns(['run_id', 'case_id']).doUpdateSet({ result: JSON.stringify(result), position }))
        .execute()
    },

    async results(tenantId: string, runId: string): Promise<EvalResult[]> {
      const rows = await db
        .selectFrom('eval_results')
        .select('result')
        .where('tenant_id', '=', tenantId)
        .where('run_id', '=', runId)
        .orderBy('position')
        .execute()
      return rows.map((r) => r.result)
    },

    async hasCases(tenantId: string): Promise<boolean> {
      return !!(await db.selectFrom('eval_cases').select('id').where('tenant_id', '=', tenantId).limit(1).executeTakeFirst())
    },

    /** When the last automatic run started (the hourly limit of evals_auto_run). */
    async lastAutoRunAt(tenantId: string): Promise<Date | null> {
      const r = await db
        .selectFrom('eval_runs')
        .select('created_at')
        .where('tenant_id', '=', tenantId)
        .where('trigger', '=', 'auto')
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst()
      return r?.created_at ?? null
    },

    async autoRun(tenantId: string): Promise<boolean> {
      const t = await db.selectFrom('tenants').select('evals_auto_run').where('id', '=', tenantId).executeTakeFirst()
      return t?.evals_auto_run ?? false
    },

    async setAutoRun(tenantId: string, on: boolean, now: Date) {
      await db.updateTable('tenants').set({ evals_auto_run: on, updated_at: now }).where('id', '=', tenantId).execute()
    },

    /** Runs left queued or running by a process that stopped (no live job of theirs): the restart's to settle. */
    async orphanRuns(limit = 100) {
      return db
        .selectFrom('eval_runs as r')
        .selectAll('r')
        .where('r.status', 'in', ['queued', 'running'])
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('jobs')
                .select('jobs.id')
                .where('jobs.dedupe_key', '=', sql<string>`'eval-run:' || r.id::text`)
                .where('jobs.status', 'in', ['queued', 'running']),
            ),
          ),
        )
        .limit(limit)
        .execute()
    },

    /** The knowledge as it stands: its documents' ids and last changes (a run's knowledge_version pin hashes this). */
    knowledgeState(tenantId: string) {
      return db.selectFrom('documents').select(['id', 'updated_at']).where('tenant_id', '=', tenantId).orderBy('id').execute()
    },

    /** The approved FAQ entries the bot answers with: an edited answer changes the knowledge_version pin as a document does. */
    approvedFaqs(tenantId: string) {
      return db
        .selectFrom('faq_candidates')
        .select(['id', 'question', 'answer'])
        .where('tenant_id', '=', tenantId)
        .where('approved', '=', true)
        .where('state', '=', 'active')
        .orderBy('id')
        .execute()
    },
  }
}

export type EvalsRepo = ReturnType<typeof createEvalsRepo>
