import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import type { GapClassification, GapRunMode, GapSource, GapStatus } from '../../db/schema/knowledge.js'

type Executor = Db

export type GapSort = 'coverage_asc' | 'newest' | 'signal_desc'

export interface GapWrite {
  label: string
  coverage_score: number | null
  classification: GapClassification
  status: GapStatus
  question_count: number
  signal_weight: number | null
  example_questions: string[]
  terms: Record<string, number>
  linked_gap_id?: string | null
  last_question_at?: Date | null
}

const GAP_COLUMNS = [
  'id',
  'source',
  'key',
  'label',
  'coverage_score',
  'classification',
  'status',
  'dismiss_reason',
  'is_new',
  'question_count',
  'signal_weight',
  'example_questions',
  'terms',
  'linked_gap_id',
  'first_seen_run_id',
  'last_question_at',
  'created_at',
  'updated_at',
] as const

export function createGapsRepo(db: Db) {
  return {
    // --- runs ---
    /** A new queued run, or undefined when the tenant already has one queued or running (partial unique index). */
    insertRun(tenantId: string, mode: GapRunMode, now: Date, trx: Executor = db) {
      return trx
        .insertInto('gap_runs')
        .values({ tenant_id: tenantId, mode, status: 'queued', accepted_at: now, started_at: null, finished_at: null, error: null, stats: null })
        .onConflict((oc) => oc.column('tenant_id').where('status', 'in', ['queued', 'running']).doNothing())
        .returning(['id', 'mode', 'status', 'accepted_at'])
        .executeTakeFirst()
    },
    openRun(tenantId: string, trx: Executor = db) {
      return trx
        .selectFrom('gap_runs')
        .select(['id', 'mode', 'status', 'accepted_at', 'started_at'])
        .where('tenant_id', '=', tenantId)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirst()
    },
    findRun(tenantId: string, runId: string, trx: Executor = db) {
      return trx.selectFrom('gap_runs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', runId).executeTakeFirst()
    },
    async startRun(tenantId: string, runId: string, now: Date, trx: Executor = db) {
      await trx.updateTable('gap_runs').set({ status: 'running', started_at: now }).where('tenant_id', '=', tenantId).where('id', '=', runId).execute()
    },
    async finishRun(
      tenantId: string,
      runId: string,
      r: { status: 'done' | 'failed'; error?: string | null; stats?: Record<string, unknown> },
      now: Date,
      trx: Executor = db,
    ) {
      await trx
        .updateTable('gap_runs')
        .set({ status: r.status, finished_at: now, error: r.error ?? null, stats: r.stats ? JSON.stringify(r.stats) : null })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', runId)
        .execute()
    },
    /** A running run's counts (the status endpoint's progress), kept in its stats until the final stats replace them. */
    async setRunProgress(tenantId: string, runId: string, progress: { done: number; total: number }, trx: Executor = db) {
      await trx
        .updateTable('gap_runs')
        .set({ stats: JSON.stringify({ progress }) })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', runId)
        .where('status', '=', 'running')
        .execute()
    },
    /** The tenant's newest run, open or finished, for the status endpoint. */
    latestRun(tenantId: string, trx: Executor = db) {
      return trx
        .selectFrom('gap_runs')
        .select(['id', 'mode', 'status', 'accepted_at', 'started_at', 'finished_at', 'stats'])
        .where('tenant_id', '=', tenantId)
        .orderBy('accepted_at', 'desc')
        .limit(1)
        .executeTakeFirst()
    },
    /** Runs left open far longer than any run takes (their job was lost) no longer block new ones. */
    async failStaleRuns(tenantId: string, olderThan: Date, now: Date, trx: Executor = db) {
      await trx
        .updateTable('gap_runs')
        .set({ status: 'failed', finished_at: now, error: 'abandoned' })
        .where('tenant_id', '=', tenantId)
        .where('status', 'in', ['queued', 'running'])
        .where('accepted_at', '<', olderThan)
        .execute()
    },
    lastDoneRun(tenantId: string, trx: Executor = db) {
      return trx
        .selectFrom('gap_runs')
        .select(['id', 'started_at', 'finished_at'])
        .where('tenant_id', '=', tenantId)
        .where('status', '=', 'done')
        .orderBy('finished_at', 'desc')
        .limit(1)
        .executeTakeFirst()
    },

    // --- gaps ---
    list(tenantId: string, source: GapSource, statuses: GapStatus[] | null, sort: GapSort, limit: number, trx: Executor = db) {
      let q = trx.selectFrom('gaps').select(GAP_COLUMNS).where('tenant_id', '=', tenantId).where('source', '=', source)
      if (statuses) q = q.where('status', 'in', statuses)
      if (sort === 'newest') q = q.orderBy('created_at', 'desc')
      else if (sort === 'coverage_asc') q = q.orderBy(sql`coverage_score asc nulls last`).orderBy(sql`signal_weight desc nulls last`)
      else q = q.orderBy(sql`signal_weight desc nulls last`).orderBy('question_count', 'desc')
      return q.orderBy('id').limit(limit).execute()
    },
    all(tenantId: string, source: GapSource, trx: Executor = db) {
      return trx.selectFrom('gaps').select(GAP_COLUMNS).where('tenant_id', '=', tenantId).where('source', '=', source).execute()
    },
    find(tenantId: string, source: GapSource, id: string, trx: Executor = db) {
      return trx.selectFrom('gaps').select(GAP_COLUMNS).where('tenant_id', '=', tenantId).where('source', '=', source).where('id', '=', id).executeTakeFirst()
    },
    setStatus(tenantId: string, source: GapSource, id: string, status: GapStatus, reason: string | null, now: Date, trx: Executor = db) {
      return trx
        .updateTable('gaps')
        .set({ status, dismiss_reason: reason, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('source', '=', source)
        .where('id', '=', id)
        .returning(['id', 'status'])
        .executeTakeFirst()
    },
    async insert(tenantId: string, source: GapSource, key: string, w: GapWrite, runId: string, now: Date, trx: Executor = db) {
      return (
        trx
          .insertInto('gaps')
          .values({
            tenant_id: tenantId,
            source,
            key,
            label: w.label,
            coverage_score: w.coverage_score,
            classification: w.classification,
            status: w.status,
            dismiss_reason: null,
            is_new: true,
            question_count: w.question_count,
            signal_weight: w.signal_weight,
            example_questions: JSON.stringify(w.example_questions),
            terms: JSON.stringify(w.terms),
            linked_gap_id: w.linked_gap_id ?? null,
            first_seen_run_id: runId,
            last_seen_run_id: runId,
            last_question_at: w.last_question_at ?? null,
            created_at: now,
            updated_at: now,
          })
          // the same key twice in one run (two topics normalising alike) updates the first
          .onConflict((oc) => oc.columns(['tenant_id', 'source', 'key']).doUpdateSet({ last_seen_run_id: runId, updated_at: now }))
          .returning('id')
          .executeTakeFirstOrThrow()
      )
    },
    /** A gap seen again: its numbers are refreshed; `status` undefined keeps the stored one (dismissed stays dismissed). */
    async update(tenantId: string, id: string, w: Partial<GapWrite> & { key?: string }, runId: string | null, now: Date, trx: Executor = db) {
      const set: Record<string, unknown> = { updated_at: now }
      for (const k of [
        'label',
        'coverage_score',
        'classification',
        'status',
        'question_count',
        'signal_weight',
        'linked_gap_id',
        'last_question_at',
        'key',
      ] as const) {
        if (w[k] !== undefined) set[k] = w[k]
      }
      if (w.example_questions !== undefined) set.example_questions = JSON.stringify(w.example_questions)
      if (w.terms !== undefined) set.terms = JSON.stringify(w.terms)
      if (runId) set.last_seen_run_id = runId
      await trx.updateTable('gaps').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
    },
    /** After a run: only gaps first seen in it are new. */
    async settleNew(tenantId: string, source: GapSource, runId: string, trx: Executor = db) {
      await trx
        .updateTable('gaps')
        .set({ is_new: sql<boolean>`(first_seen_run_id = ${runId})` })
        .where('tenant_id', '=', tenantId)
        .where('source', '=', source)
        .execute()
    },
    async counts(tenantId: string, trx: Executor = db) {
      return trx
        .selectFrom('gaps')
        .select([
          'source',
          sql<number>`count(*) filter (where status = 'active')::int`.as('active'),
          sql<number>`count(*) filter (where status = 'active' and classification = 'uncovered')::int`.as('uncovered'),
          sql<number>`count(*) filter (where status = 'active' and classification = 'partial')::int`.as('partial'),
          sql<number>`count(*) filter (where status = 'active' and is_new)::int`.as('new'),
        ])
        .where('tenant_id', '=', tenantId)
        .groupBy('source')
        .execute()
    },

    // --- what the analyzer reads (other modules' tables, read only) ---
    /** Logged visitor questions (redacted) since a time, newest first. */
    questions(tenantId: string, since: Date, limit: number, trx: Executor = db) {
      return trx
        .selectFrom('question_log')
        .select(['id', 'question', 'outcome', 'feedback', 'best_score', 'message_id', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('created_at', '>=', since)
        .orderBy('created_at', 'desc')
        .limit(limit)
        .execute()
    },
    /** Assistant replies by id (for FAQ candidates from the logs). */
    replies(tenantId: string, messageIds: string[], trx: Executor = db) {
      if (messageIds.length === 0) return Promise.resolve([])
      return trx
        .selectFrom('chat_messages')
        .select(['id', 'content', 'feedback'])
        .where('tenant_id', '=', tenantId)
        .where('role', '=', 'assistant')
        .where('from_operator', '=', false)
        .where('id', 'in', messageIds)
        .execute()
    },
    /** A stable sample of chunks (ordered by their random uuids) with their headings. */
    chunkSample(tenantId: string, limit: number, chars: number, trx: Executor = db) {
      return trx
        .selectFrom('chunks')
        .select(['id', 'heading_path', 'section_title', sql<string>`left(content, ${chars})`.as('text')])
        .where('tenant_id', '=', tenantId)
        .orderBy('id')
        .limit(limit)
        .execute()
    },
  }
}

export type GapsRepo = ReturnType<typeof createGapsRepo>
export type GapRow = NonNullable<Awaited<ReturnType<GapsRepo['find']>>>
