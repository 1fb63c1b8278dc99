import type { Logger } from 'pino'
import type { Db } from '../../db/client.js'
import type { GapRunMode, GapSource, GapStatus } from '../../db/schema/knowledge.js'
import type { JobQueue } from '../../jobs/queue.js'
import { addSeconds, type Clock } from '../../lib/clock.js'
import { notFound } from '../../lib/errors.js'
import type { LlmClient } from '../llm/llm.js'
import type { RetrievalService } from '../retrieval/retrieval.service.js'
import { DRAFT_PROMPT, templateDraft } from './gaps.fns.js'
import { presentRunProgress } from './gaps.progress.js'
import type { GapRow, GapSort, GapsRepo } from './gaps.repo.js'

/** A run open longer than this lost its job (it would have failed or finished): it stops blocking new runs. */
const STALE_RUN_SECONDS = 3600
const DEFAULT_RETRY_SECONDS = 15
const MAX_ITEMS = 500

const MODE_A_STATUSES: Record<string, GapStatus[] | null> = { active: ['active'], dismissed: ['dismissed'], archived: ['archived'], all: null }
const MODE_B_STATUSES: Record<string, GapStatus[] | null> = {
  active: ['active'],
  closed: ['closed'],
  dismissed: ['dismissed'],
  inactive: ['inactive'],
  archived: ['archived'],
  all: null,
}

/** The statuses a filter value stands for; null is every status ('all'). */
const statusFilter = (map: Record<string, GapStatus[] | null>, v: string | undefined): GapStatus[] | null => {
  const key = v ?? 'active'
  return key in map ? map[key]! : ['active']
}

export function presentGap(g: GapRow) {
  return {
    id: g.id,
    source: g.source,
    label: g.label,
    coverage_score: g.coverage_score === null ? null : Math.round(g.coverage_score * 10000) / 10000,
    classification: g.classification,
    status: g.status,
    is_new: g.is_new,
    question_count: g.question_count,
    signal_weight: g.signal_weight === null ? null : Math.round(g.signal_weight * 100) / 100,
    example_questions: g.example_questions ?? [],
    linked_gap_id: g.linked_gap_id,
    last_updated: g.updated_at.toISOString(),
    dismiss_reason: g.dismiss_reason,
    first_seen_at: g.created_at.toISOString(),
  }
}

export function createGapsService(deps: {
  db: Db
  clock: Clock
  queue: JobQueue
  log: Pick<Logger, 'warn'>
  repo: GapsRepo
  llm: Pick<LlmClient, 'chat'>
  llmKey: (tenantId: string) => Promise<string | null>
  retrieval: Pick<RetrievalService, 'search'>
  settings: { guardModel: string; llmTimeoutMs: number }
}) {
  const { db, clock, queue, repo } = deps

  async function gapOr404(tenantId: string, source: GapSource, id: string): Promise<GapRow> {
    const g = await repo.find(tenantId, source, id)
    if (!g) throw notFound('Gap not found')
    return g
  }

  async function summary(tenantId: string) {
    const [counts, last, run] = await Promise.all([repo.counts(tenantId), repo.lastDoneRun(tenantId), repo.latestRun(tenantId)])
    const by = (s: GapSource) => counts.find((c) => c.source === s)
    const sum = (k: 'active' | 'uncovered' | 'partial' | 'new') => (by('mode_a')?.[k] ?? 0) + (by('mode_b')?.[k] ?? 0)
    return {
      total_active: sum('active'),
      uncovered_count: sum('uncovered'),
      partial_count: sum('partial'),
      new_count: sum('new'),
      by_source: { mode_a: by('mode_a')?.active ?? 0, mode_b: by('mode_b')?.active ?? 0 },
      last_updated: last?.finished_at ? last.finished_at.toISOString() : null,
      run: run
        ? {
            id: run.id,
            mode: run.mode,
            status: run.status,
            accepted_at: run.accepted_at.toISOString(),
            started_at: run.started_at?.toISOString() ?? null,
            finished_at: run.finished_at?.toISOString() ?? null,
            progress: presentRunProgress(run.status, run.stats),
          }
        : null,
    }
  }

  return {
    async list(tenantId: string, q: { mode_a_status?: string; mode_b_status?: string; mode_a_sort?: string; mode_b_sort?: string }) {
      const [s, a, b] = await Promise.all([
        summary(tenantId),
        repo.list(tenantId, 'mode_a', statusFilter(MODE_A_STATUSES, q.mode_a_status), (q.mode_a_sort ?? 'coverage_asc') as GapSort, MAX_ITEMS),
        repo.list(tenantId, 'mode_b', statusFilter(MODE_B_STATUSES, q.mode_b_status), (q.mode_b_sort ?? 'signal_desc') as GapSort, MAX_ITEMS),
      ])
      return { summary: s, mode_a_items: a.map(presentGap), mode_b_items: b.map(presentGap) }
    },

    async summary(tenantId: string) {
      const s = await summary(tenantId)
      return { summary: s, ...s }
    },

    /**
     * Starts a run (202 accepted) unless one is queued or running for the tenant; then the answer says
     * in_progress with a retry time estimated from the last run's duration.
     */
    async recalculate(
      tenantId: string,
      mode: GapRunMode,
      attempt = 0,
    ): Promise<{
      mode: GapRunMode
      status: 'accepted' | 'in_progress'
      accepted_at: string
      retry_after_seconds: number | null
      run_id: string
    }> {
      const now = clock.now()
      await repo.failStaleRuns(tenantId, addSeconds(now, -STALE_RUN_SECONDS), now)
      const run = await db.transaction().execute(async (trx) => {
        const r = await repo.insertRun(tenantId, mode, now, trx)
        if (r) await queue.enqueue('gaps.recalculate', { tenantId, runId: r.id, mode }, { tenantId, maxAttempts: 3 }, trx)
        return r
      })
      if (run) return { mode, status: 'accepted' as const, accepted_at: run.accepted_at.toISOString(), retry_after_seconds: null, run_id: run.id }
      const open = await repo.openRun(tenantId)
      if (!open && attempt < 2) return this.recalculate(tenantId, mode, attempt + 1) // it finished in between
      if (!open) throw new Error('could not start a gap analyzer run')
      const last = await repo.lastDoneRun(tenantId)
      const took = last?.started_at && last.finished_at ? (last.finished_at.getTime() - last.started_at.getTime()) / 1000 : DEFAULT_RETRY_SECONDS
      const elapsed = open.started_at ? (now.getTime() - open.started_at.getTime()) / 1000 : 0
      const retry = Math.max(5, Math.min(600, Math.ceil(took - elapsed)))
      return { mode: open.mode, status: 'in_progress' as const, accepted_at: open.accepted_at.toISOString(), retry_after_seconds: retry, run_id: open.id }
    },

    async setStatus(tenantId: string, source: GapSource, id: string, status: 'dismissed' | 'active', reason: string | null) {
      await gapOr404(tenantId, source, id)
      const r = await repo.setStatus(tenantId, source, id, status, reason, clock.now())
      if (!r) throw notFound('Gap not found')
      return { success: true, source, gap_id: id, status: r.status }
    },

    /** A markdown skeleton for the article that would close the gap: the guard model with a key, a template otherwise. */
    async draft(tenantId: string, source: GapSource, id: string) {
      const g = await gapOr404(tenantId, source, id)
      const apiKey = await deps.llmKey(tenantId)
      let related: { title: string; text: string }[] = []
      try {
        const r = await deps.retrieval.search(tenantId, g.label, { apiKey, k: 3 })
        related = r.hits.filter((h) => h.kind === 'chunk').map((h) => ({ title: h.title, text: h.text.slice(0, 800) }))
      } catch {
        related = []
      }
      const base = { source, gap_id: g.id }
      const template = templateDraft({
        source,
        label: g.label,
        coverage: g.coverage_score,
        examples: g.example_questions ?? [],
        related: [...new Set(related.map((r) => r.title))],
      })
      if (!apiKey) return { ...base, ...template }
      try {
        const r = await deps.llm.chat({
          apiKey,
          model: deps.settings.guardModel,
          json: true,
          temperature: 0.2,
          maxTokens: 1500,
          timeoutMs: deps.settings.llmTimeoutMs,
          messages: [
            { role: 'system', content: DRAFT_PROMPT },
            {
              role: 'user',
              content: [
                `Gap: ${g.label}`,
                g.example_questions?.length ? `Example questions:\n${g.example_questions.map((q) => `- ${q}`).join('\n')}` : '',
                related.length
                  ? `What the documentation says so far:\n${related.map((x) => `### ${x.title}\n${x.text}`).join('\n\n')}`
                  : 'The documentation says nothing about this yet.',
              ]
                .filter(Boolean)
                .join('\n\n'),
            },
          ],
        })
        const start = r.text.indexOf('{')
        const end = r.text.lastIndexOf('}')
        const v = start >= 0 && end > start ? (JSON.parse(r.text.slice(start, end + 1)) as Record<string, unknown>) : null
        const markdown = typeof v?.markdown === 'string' ? v.markdown.trim().slice(0, 20_000) : ''
        if (!markdown) return { ...base, ...template }
        const title = typeof v?.title === 'string' && v.title.trim() ? v.title.replace(/\s+/g, ' ').trim().slice(0, 200) : template.title
        return { ...base, title, markdown }
      } catch (err) {
        deps.log.warn({ tenantId, err: { kind: (err as { kind?: string }).kind ?? 'invalid_reply' } }, 'gap draft: model failed, template used')
        return { ...base, ...template }
      }
    },
  }
}

export type GapsService = ReturnType<typeof createGapsService>
