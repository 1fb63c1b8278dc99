import type { Logger } from 'pino'
import type { Db } from '../../db/client.js'
import type { GapStatus } from '../../db/schema/knowledge.js'
import { addSeconds, type Clock } from '../../lib/clock.js'
import type { FaqDraft, ProfileData } from '../knowledge/knowledge.fns.js'
import { normalizeDense, oneLine, termKey, terms } from '../knowledge/text.fns.js'
import type { LlmClient } from '../llm/llm.js'
import type { RetrievalService } from '../retrieval/retrieval.service.js'
import {
  classify,
  clusterCoverage,
  clusterGroups,
  clusterKey,
  clusterTerms,
  createYielder,
  groupQuestions,
  matchExisting,
  questionSignal,
  round,
  tfidf,
  topicMatches,
} from './cluster.fns.js'
import { dedupeTopics, heuristicTopics, topicsFromReply, TOPICS_PROMPT } from './gaps.fns.js'
import { createRunProgress, mapCounted, type RunProgress } from './gaps.progress.js'
import type { GapRow, GapsRepo, GapWrite } from './gaps.repo.js'
import { trimEndOf } from '../../lib/trim-run.fns.js'

/**
 * One recalculation of a tenant's gaps. Mode A: topics the documentation should cover (the profile's
 * topics plus the guard model's reading of a sample of chunks, or recurring headings and phrases without
 * a key), each scored by how well retrieval covers it. Mode B: the logged visitor questions clustered
 * (embeddings when the tenant has a key, lexical otherwise), each cluster weighted by its signal
 * (escalations and thumbs-down weigh more) and scored by retrieval and by how its answers went; clusters
 * about a mode A topic are linked to it. Gaps are matched to the previous runs' by key and terms, so a
 * dismissed gap stays dismissed. Well-answered clusters also become FAQ candidates (source logs).
 */

export interface AnalyzerSettings {
  guardModel: string
  embeddingModel: string
  llmTimeoutMs: number
  partialAt: number
  coveredAt: number
  lookbackDays: number
  maxQuestions: number
  inactiveDays: number
  minClusterSize: number
  rescoreLimit: number
  maxTopics: number
}

export interface AnalyzerDeps {
  db: Db
  clock: Clock
  log: Pick<Logger, 'info' | 'warn'>
  repo: GapsRepo
  retrieval: Pick<RetrievalService, 'search'>
  llm: Pick<LlmClient, 'chat' | 'embed'>
  llmKey: (tenantId: string) => Promise<string | null>
  profileFor: (tenantId: string) => Promise<ProfileData | null>
  addFaqCandidates: (tenantId: string, drafts: FaqDraft[], source: 'logs', documentId: null) => Promise<number>
  settings: AnalyzerSettings
}

const LEXICAL_JOIN = 0.5
const DENSE_JOIN = 0.8
const EMBED_BATCH = 256
/** Vector size asked for clustering (text-embedding-3 models can shorten; others answer at their own size). */
const CLUSTER_DIMENSIONS = 256
const FAQ_MIN_CLUSTER = 3
const FAQ_PER_RUN = 50
const WRITE_BATCH = 100

interface Planned {
  existingId: string | null
  key: string
  write: GapWrite
  /** Keep the stored status (dismissed). */
  keepStatus: boolean
}

export function createGapAnalyzer(deps: AnalyzerDeps) {
  const { db, clock, log, repo, settings } = deps

  async function coverageOf(tenantId: string, query: string, apiKey: string | null, signal?: AbortSignal): Promise<number> {
    try {
      const r = await deps.retrieval.search(tenantId, query.slice(0, 1000), { apiKey, k: 3, signal })
      return round(Math.max(0, Math.min(1, r.bestScore)))
    } catch (err) {
      log.warn({ tenantId, err: { message: (err as Error).message } }, 'gap coverage: retrieval failed')
      return 0
    }
  }

  /** Inserts and updates in small transactions, so the single PGlite connection is never held for long. */
  async function write(
    tenantId: string,
    source: 'mode_a' | 'mode_b',
    planned: Planned[],
    unseen: { id: string; status: GapStatus }[],
    runId: string,
  ): Promise<Map<number, string>> {
    const ids = new Map<number, string>()
    for (let i = 0; i < planned.length; i += WRITE_BATCH) {
      const slice = planned.slice(i, i + WRITE_BATCH)
      await db.transaction().execute(async (trx) => {
        const now = clock.now()
        for (const [j, p] of slice.entries()) {
          if (p.existingId) {
            const { status, ...rest } = p.write
            await repo.update(tenantId, p.existingId, { ...rest, key: p.key, ...(p.keepStatus ? {} : { status }) }, runId, now, trx)
            ids.set(i + j, p.existingId)
          } else {
            const r = await repo.insert(tenantId, source, p.key, p.write, runId, now, trx)
            ids.set(i + j, r.id)
          }
        }
      })
    }
    for (let i = 0; i < unseen.length; i += WRITE_BATCH) {
      await db.transaction().execute(async (trx) => {
        for (const u of unseen.slice(i, i + WRITE_BATCH)) await repo.update(tenantId, u.id, { status: 'archived' }, null, clock.now(), trx)
      })
    }
    await repo.settleNew(tenantId, source, runId)
    return ids
  }

  async function discoverTopics(tenantId: string, apiKey: string | null, signal?: AbortSignal): Promise<string[]> {
    const [profile, chunks] = await Promise.all([deps.profileFor(tenantId), repo.chunkSample(tenantId, 400, 700)])
    const fromProfile = profile?.topics ?? []
    let found: string[] = []
    if (chunks.length && apiKey) {
      const excerpts: string[] = []
      let budget = 12_000
      for (const c of chunks) {
        if (budget < 200) break
        const piece = `### ${c.heading_path || c.section_title || 'Excerpt'}\n${c.text.slice(0, 500)}`
        budget -= piece.length
        excerpts.push(piece)
      }
      try {
        const r = await deps.llm.chat({
          apiKey,
          model: settings.guardModel,
          json: true,
          temperature: 0,
          maxTokens: 800,
          timeoutMs: settings.llmTimeoutMs,
          signal,
          messages: [
            { role: 'system', content: TOPICS_PROMPT },
            {
              role: 'user',
              content: `${profile?.product_name ? `Product: ${profile.product_name}\n\n` : ''}Documentation excerpts:\n\n${excerpts.join('\n\n')}`,
            },
          ],
        })
        const start = r.text.indexOf('{')
        const end = r.text.lastIndexOf('}')
        found = start >= 0 && end > start ? topicsFromReply(JSON.parse(r.text.slice(start, end + 1)) as Record<string, unknown>, settings.maxTopics) : []
      } catch (err) {
        log.warn({ tenantId, err: { kind: (err as { kind?: string }).kind ?? 'invalid_reply' } }, 'gap topics: model failed, using headings')
        found = []
      }
    }
    if (found.length === 0 && chunks.length) {
      found = heuristicTopics(
        chunks.map((c) => ({ heading: c.heading_path || c.section_title, text: c.text })),
        settings.maxTopics,
      )
    }
    return dedupeTopics([...fromProfile, ...found], settings.maxTopics)
  }

  async function modeA(tenantId: string, runId: string, apiKey: string | null, progress: RunProgress, signal?: AbortSignal) {
    const topics = await discoverTopics(tenantId, apiKey, signal)
    progress.add(topics.length)
    progress.step()
    const coverage = await mapCounted(topics, 4, progress, (t) => coverageOf(tenantId, t, apiKey, signal))
    const items = topics.map((label, i) => {
      const t: Record<string, number> = {}
      for (const x of terms(label)) t[x] = 1
      return { label, key: termKey(label), terms: t, coverage: coverage[i]! }
    })
    const stored = await repo.all(tenantId, 'mode_a')
    const match = matchExisting(items, stored, 0.75)
    const byId = new Map(stored.map((s) => [s.id, s]))
    const planned: Planned[] = []
    items.forEach((it, i) => {
      const cls = classify(it.coverage, settings.partialAt, settings.coveredAt)
      const existing = match.get(i) ? byId.get(match.get(i)!)! : null
      if (!existing && cls === 'covered') return
      planned.push({
        existingId: existing?.id ?? null,
        key: it.key,
        keepStatus: existing?.status === 'dismissed',
        write: {
          label: it.label,
          coverage_score: it.coverage,
          classification: cls,
          status: cls === 'covered' ? 'archived' : 'active',
          question_count: existing?.question_count ?? 0,
          signal_weight: null,
          example_questions: existing?.example_questions ?? [],
          terms: it.terms,
        },
      })
    })
    const seen = new Set(planned.map((p) => p.existingId).filter(Boolean))
    const unseen = stored.filter((s) => !seen.has(s.id) && s.status === 'active')
    await write(tenantId, 'mode_a', planned, unseen, runId)
    progress.step()
    const active = planned.filter((p) => p.write.status === 'active' && !p.keepStatus).length
    return { topics: topics.length, active }
  }

  async function embedGroups(tenantId: string, apiKey: string, texts: string[], signal?: AbortSignal): Promise<Float32Array[] | null> {
    const out: Float32Array[] = []
    const shorten = /^text-embedding-3/.test(settings.embeddingModel)
    try {
      for (let i = 0; i < texts.length; i += EMBED_BATCH) {
        const batch = texts.slice(i, i + EMBED_BATCH).map((t) => t.slice(0, 1000))
        const r = await deps.llm.embed({
          apiKey,
          model: settings.embeddingModel,
          input: batch,
          ...(shorten ? { dimensions: CLUSTER_DIMENSIONS } : {}),
          timeoutMs: settings.llmTimeoutMs,
          signal,
        })
        if (r.vectors.length !== batch.length) throw new Error('embedding count mismatch')
        for (const v of r.vectors) out.push(normalizeDense(v))
      }
      return out
    } catch (err) {
      log.warn({ tenantId, err: { kind: (err as { kind?: string }).kind ?? (err as Error).message } }, 'gap clustering: embeddings failed, lexical only')
      return null
    }
  }

  async function modeB(tenantId: string, runId: string, apiKey: string | null, progress: RunProgress, signal?: AbortSignal) {
    const now = clock.now()
    const t0 = performance.now()
    const rows = await repo.questions(tenantId, addSeconds(now, -settings.lookbackDays * 86400), settings.maxQuestions)
    const tLoad = performance.now()
    const groups = await groupQuestions(rows.map((r) => r.question))
    const { vectors, idf } = tfidf(groups)
    const weights = groups.map((g) => g.members.length)
    const dense =
      apiKey && groups.length
        ? await embedGroups(
            tenantId,
            apiKey,
            groups.map((g) => g.text),
            signal,
          )
        : null
    const tEmbed = performance.now()
    const clusters = await clusterGroups(vectors, weights, dense, idf, { lexicalThreshold: LEXICAL_JOIN, denseThreshold: DENSE_JOIN, signal })
    const tCluster = performance.now()

    const inactiveBefore = addSeconds(now, -settings.inactiveDays * 86400)
    const yielder = createYielder(8, signal)
    const described: {
      groups: number[]
      members: number[]
      label: string
      key: string
      terms: Record<string, number>
      count: number
      signal: number
      lastAt: Date
      examples: string[]
      loggedScore: number
      outcomes: { outcome: string; feedback: string }[]
    }[] = []
    for (const gs of clusters) {
      await yielder.tick()
      const members = gs.flatMap((g) => groups[g]!.members)
      const qs = members.map((m) => rows[m]!)
      const t = clusterTerms(gs, vectors, weights)
      const bySize = [...gs].sort((a, b) => groups[b]!.members.length - groups[a]!.members.length)
      const logged = qs.filter((q) => q.best_score !== null).map((q) => q.best_score!)
      described.push({
        groups: gs,
        members,
        label: oneLine(groups[bySize[0]!]!.text, 200),
        key: clusterKey(t),
        terms: t,
        count: members.length,
        signal: round(
          qs.reduce((s, q) => s + questionSignal(q), 0),
          2,
        ),
        lastAt: qs.reduce((m, q) => (q.created_at > m ? q.created_at : m), new Date(0)),
        examples: bySize.slice(0, 5).map((g) => oneLine(groups[g]!.text, 300)),
        loggedScore: logged.length ? logged.reduce((a, b) => a + b, 0) / logged.length : 0,
        outcomes: qs.map((q) => ({ outcome: q.outcome, feedback: q.feedback })),
      })
    }

    // coverage: retrieval again for the strongest clusters, the logged scores for the long tail
    const candidates = described.filter((c) => c.count >= settings.minClusterSize)
    const rescore = [...candidates].sort((a, b) => b.signal - a.signal).slice(0, settings.rescoreLimit)
    progress.add(rescore.length)
    progress.step()
    const fresh = new Map<(typeof described)[number], number>()
    await mapCounted(rescore, 4, progress, async (c) => fresh.set(c, await coverageOf(tenantId, c.label, apiKey, signal)))
    const tScore = performance.now()

    const topics = (await repo.all(tenantId, 'mode_a')).filter((g) => g.status !== 'archived')
    const stored = await repo.all(tenantId, 'mode_b')
    const match = matchExisting(candidates, stored, 0.5)
    const byId = new Map(stored.map((s) => [s.id, s]))
    const planned: Planned[] = []
    const linkCounts = new Map<string, { count: number; examples: string[] }>()
    candidates.forEach((c, i) => {
      const coverage = clusterCoverage(fresh.get(c) ?? c.loggedScore, c.outcomes)
      const cls = classify(coverage, settings.partialAt, settings.coveredAt)
      const existing = match.get(i) ? byId.get(match.get(i)!)! : null
      if (!existing && cls === 'covered') return
      let linked: GapRow | null = null
      let bestLink = 0
      for (const topic of topics) {
        const s = topicMatches(topic.label, c.terms)
        if (s >= 0.6 && s > bestLink) {
          bestLink = s
          linked = topic
        }
      }
      if (linked) {
        const l = linkCounts.get(linked.id) ?? { count: 0, examples: [] }
        l.count += c.count
        if (l.examples.length < 5) l.examples.push(...c.examples.slice(0, 5 - l.examples.length))
        linkCounts.set(linked.id, l)
      }
      const status: GapStatus = cls === 'covered' ? 'closed' : c.lastAt < inactiveBefore ? 'inactive' : 'active'
      planned.push({
        existingId: existing?.id ?? null,
        key: c.key,
        keepStatus: existing?.status === 'dismissed',
        write: {
          label: c.label,
          coverage_score: coverage,
          classification: cls,
          status,
          question_count: c.count,
          signal_weight: c.signal,
          example_questions: c.examples,
          terms: c.terms,
          linked_gap_id: linked?.id ?? null,
          last_question_at: c.lastAt,
        },
      })
    })
    const seen = new Set(planned.map((p) => p.existingId).filter(Boolean))
    const unseen = stored.filter((s) => !seen.has(s.id) && (s.status === 'active' || s.status === 'closed' || s.status === 'inactive'))
    await write(tenantId, 'mode_b', planned, unseen, runId)
    // mode A topics carry the visitor questions of the clusters linked to them
    await db.transaction().execute(async (trx) => {
      for (const topic of topics) {
        const l = linkCounts.get(topic.id)
        if (!l && topic.question_count === 0) continue
        await repo.update(tenantId, topic.id, { question_count: l?.count ?? 0, example_questions: l?.examples ?? [] }, null, clock.now(), trx)
      }
    })
    const tWrite = performance.now()

    const faqs = await logsFaqs(tenantId, described, rows)
    progress.step()
    const ms = (a: number, b: number) => Math.round(b - a)
    return {
      questions: rows.length,
      groups: groups.length,
      clusters: clusters.length,
      gaps: planned.length,
      embeddings: dense !== null,
      faq_candidates: faqs,
      timings_ms: { load: ms(t0, tLoad), embed: ms(tLoad, tEmbed), cluster: ms(tEmbed, tCluster), coverage: ms(tCluster, tScore), write: ms(tScore, tWrite) },
    }
  }

  /** Clusters of at least three questions whose answer was liked (or at least not disliked) become FAQ candidates. */
  async function logsFaqs(
    tenantId: string,
    described: { label: string; count: number; members: number[] }[],
    rows: Awaited<ReturnType<GapsRepo['questions']>>,
  ): Promise<number> {
    const picks: { label: string; messageId: string; liked: boolean; count: number; good: number }[] = []
    for (const c of described) {
      if (c.count < FAQ_MIN_CLUSTER || picks.length >= FAQ_PER_RUN) continue
      const qs = c.members.map((m) => rows[m]!)
      const ok = qs.filter((q) => q.outcome === 'answered' && q.feedback !== 'down' && q.message_id)
      const down = qs.filter((q) => q.feedback === 'down').length
      const up = qs.filter((q) => q.feedback === 'up').length
      if (ok.length === 0 || down > up) continue
      const best = ok.find((q) => q.feedback === 'up') ?? ok[0]!
      picks.push({ label: c.label, messageId: best.message_id!, liked: best.feedback === 'up', count: c.count, good: ok.length / qs.length })
    }
    if (picks.length === 0) return 0
    const replies = new Map(
      (
        await repo.replies(
          tenantId,
          picks.map((p) => p.messageId),
        )
      ).map((r) => [r.id, r]),
    )
    const drafts: FaqDraft[] = []
    for (const p of picks) {
      const reply = replies.get(p.messageId)
      if (!reply || reply.feedback === 'down') continue
      const answer = reply.content.replace(/\s?\[\d{1,3}\]/g, '').trim()
      if (answer.length < 2) continue
      const question = /[?？]$/.test(p.label) ? p.label : `${trimEndOf(p.label, '.!')}?`
      const confidence = Math.min(0.95, 0.4 + 0.1 * Math.min(4, Math.log2(p.count)) + (p.liked ? 0.2 : 0) + 0.15 * p.good)
      drafts.push({ question: oneLine(question, 500), answer: answer.slice(0, 4000), confidence: round(confidence, 3) })
    }
    return deps.addFaqCandidates(tenantId, drafts, 'logs', null)
  }

  return {
    /** One run; `progress` (counts for the status endpoint) gets two steps per mode now and the rest as they are found. */
    async run(
      tenantId: string,
      runId: string,
      mode: 'mode_a' | 'mode_b' | 'both',
      signal?: AbortSignal,
      progress: RunProgress = createRunProgress(async () => {}),
    ): Promise<Record<string, unknown>> {
      const apiKey = await deps.llmKey(tenantId)
      const stats: Record<string, unknown> = { mode }
      const t0 = performance.now()
      const a = mode === 'mode_a' || mode === 'both'
      const b = mode === 'mode_b' || mode === 'both'
      progress.add((a ? 2 : 0) + (b ? 2 : 0))
      await progress.flush()
      if (a) stats.mode_a = await modeA(tenantId, runId, apiKey, progress, signal)
      if (b) stats.mode_b = await modeB(tenantId, runId, apiKey, progress, signal)
      stats.progress = progress.counts()
      stats.duration_ms = Math.round(performance.now() - t0)
      log.info({ tenantId, runId, stats }, 'gap analyzer run')
      return stats
    },
  }
}

export type GapAnalyzer = ReturnType<typeof createGapAnalyzer>
