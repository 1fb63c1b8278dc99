import { NoticeCache, type ChangeFeed } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import type { FaqSource, ProfileField } from '../../db/schema/knowledge.js'
import type { JobQueue } from '../../jobs/queue.js'
import { addSeconds, type Clock } from '../../lib/clock.js'
import { notFound, ValidationError } from '../../lib/errors.js'
import type { FaqHit } from '../retrieval/retrieval.service.js'
import { cleanUrl, dedupeFaqs, faqScore, PROFILE_FIELDS, questionKey, sanitizeFaqPairs, type FaqDraft, type ProfileData } from './knowledge.fns.js'
import { FAQS_TOPIC, PROFILE_TOPIC, type FaqRow, type KnowledgeRepo, type ProfileRow, type ProfileWrite } from './knowledge.repo.js'
import type { FaqListFilter, KnowledgeProfilePatch } from './knowledge.schemas.js'
import { oneLine, terms } from './text.fns.js'

export interface KnowledgeSettings {
  /** Seconds after the last indexed document before the profile and FAQ extraction runs (debounce). */
  extractDelaySeconds: number
  /** Confidence at or above which a new candidate is approved when the tenant switched auto-approve on. */
  autoApproveConfidence: number
  /** Approved FAQs scoring at least this against a query join the answer's context. */
  faqContextScore: number
}

/** At most this many approved FAQs take part in answering (newest first). */
const MAX_ANSWERING_FAQS = 2000

export function presentProfile(p: ProfileRow) {
  return {
    product_name: p.product_name,
    topics: p.topics ?? [],
    glossary: p.glossary ?? [],
    support_email: p.support_email,
    support_urls: p.support_urls ?? [],
    extraction_status: p.extraction_status,
    updated_at: p.updated_at.toISOString(),
    faq_auto_approve: p.faq_auto_approve,
    operator_fields: p.operator_fields ?? [],
    extracted_at: p.extracted_at ? p.extracted_at.toISOString() : null,
  }
}

export function presentFaq(f: FaqRow) {
  return {
    id: f.id,
    question: f.question,
    answer: f.answer,
    confidence: f.confidence === null ? null : Math.round(f.confidence * 1000) / 1000,
    source: f.source,
    approved: f.approved,
    created_at: f.created_at.toISOString(),
    updated_at: f.updated_at.toISOString(),
    document_id: f.document_id,
  }
}

export const enqueueExtraction = (queue: JobQueue, clock: Clock, tenantId: string, delaySeconds: number) =>
  queue.enqueue(
    'knowledge.extract',
    { tenantId },
    { dedupeKey: `knowledge.extract:${tenantId}`, tenantId, runAt: addSeconds(clock.now(), delaySeconds), maxAttempts: 3 },
  )

export function createKnowledgeService(deps: { db: Db; clock: Clock; queue: JobQueue; repo: KnowledgeRepo; settings: KnowledgeSettings; changes: ChangeFeed }) {
  const { db, clock, queue, repo, settings } = deps
  // Read on every chat turn; changes only through the repository's announced profile writes.
  const profiles = new NoticeCache<ProfileData | null>(deps.changes, PROFILE_TOPIC, { ttlMs: 60_000, max: 10_000, clock })
  // Approved FAQs are read on every turn too; a tenant's list is kept while it is small (bounding the cache
  // at 500 x 64 KB), and every FAQ write drops it.
  const approved = new NoticeCache<Awaited<ReturnType<KnowledgeRepo['approvedFaqs']>>>(deps.changes, FAQS_TOPIC, {
    ttlMs: 60_000,
    max: 500,
    clock,
    keep: (rows) => rows.reduce((n, r) => n + r.question.length + r.answer.length, 0) <= 64 * 1024,
  })

  /** The profile as the answer pipeline uses it; null until anything is known. */
  async function loadProfile(tenantId: string): Promise<ProfileData | null> {
    const p = await repo.findProfile(tenantId)
    if (!p) return null
    const data: ProfileData = {
      product_name: p.product_name,
      topics: p.topics ?? [],
      glossary: p.glossary ?? [],
      support_email: p.support_email,
      support_urls: p.support_urls ?? [],
    }
    const empty = !data.product_name && !data.topics.length && !data.glossary.length && !data.support_email && !data.support_urls.length
    return empty ? null : data
  }

  async function faqOr404(tenantId: string, id: string): Promise<FaqRow> {
    const f = await repo.findFaq(tenantId, id)
    if (!f) throw notFound('FAQ candidate not found')
    return f
  }

  /**
   * New candidates from one source: near-duplicates of any candidate the tenant has or had are dropped;
   * with auto-approve on, those at or above the confidence threshold are approved at once.
   */
  async function addCandidates(tenantId: string, drafts: FaqDraft[], source: FaqSource, documentId: string | null, trx: Db = db): Promise<number> {
    if (drafts.length === 0) return 0
    const [keys, profile] = await Promise.all([repo.faqKeys(tenantId, trx), repo.findProfile(tenantId, trx)])
    const fresh = dedupeFaqs(drafts, keys)
    const auto = profile?.faq_auto_approve ?? false
    return repo.insertFaqs(
      tenantId,
      fresh.map((d) => ({
        question: d.question,
        answer: d.answer,
        confidence: d.confidence,
        source,
        questionKey: d.key,
        documentId,
        approved: auto && d.confidence >= settings.autoApproveConfidence,
      })),
      clock.now(),
      trx,
    )
  }

  return {
    async getProfile(tenantId: string) {
      return presentProfile(await repo.ensureProfile(tenantId, clock.now()))
    },

    /** Operator edits: each field present is set and marked as the operator's, so extractions leave it alone. */
    async patchProfile(tenantId: string, body: KnowledgeProfilePatch) {
      const urls: string[] = []
      for (const [i, u] of (body.support_urls ?? []).entries()) {
        const clean = cleanUrl(u)
        if (!clean) throw new ValidationError(['body', 'support_urls', i], 'must be an absolute http(s) URL', 'value_error.url')
        if (!urls.includes(clean)) urls.push(clean)
      }
      const now = clock.now()
      await repo.ensureProfile(tenantId, now)
      const row = await db.transaction().execute(async (trx) => {
        const current = (await repo.lockProfile(tenantId, trx))!
        const w: ProfileWrite = {}
        const set = new Set<ProfileField>(current.operator_fields ?? [])
        for (const f of body.reset_fields ?? []) set.delete(f)
        if (body.product_name !== undefined) {
          w.product_name = body.product_name === null ? null : oneLine(body.product_name, 200) || null
          set.add('product_name')
        }
        if (body.topics !== undefined) {
          w.topics = [
            ...new Map(
              body.topics
                .map((t) => oneLine(t, 200))
                .filter(Boolean)
                .map((t) => [t.toLowerCase(), t]),
            ).values(),
          ]
          set.add('topics')
        }
        if (body.glossary !== undefined) {
          w.glossary = [
            ...new Map(
              body.glossary
                .map((g) => ({ term: oneLine(g.term, 200), definition: g.definition.trim() }))
                .filter((g) => g.term)
                .map((g) => [g.term.toLowerCase(), g]),
            ).values(),
          ]
          set.add('glossary')
        }
        if (body.support_email !== undefined) {
          w.support_email = body.support_email ? body.support_email.trim().toLowerCase() : null
          set.add('support_email')
        }
        if (body.support_urls !== undefined) {
          w.support_urls = urls
          set.add('support_urls')
        }
        if (body.faq_auto_approve !== undefined) w.faq_auto_approve = body.faq_auto_approve
        w.operator_fields = PROFILE_FIELDS.filter((f) => set.has(f))
        return repo.updateProfile(tenantId, w, now, trx)
      })
      return presentProfile(row!)
    },

    /**
     * The profile as the answer pipeline can use it (product name in the prompt, topics for the relevance
     * guard, glossary for query rewriting); null until anything is known.
     */
    profileFor(tenantId: string): Promise<ProfileData | null> {
      return profiles.get(tenantId, () => loadProfile(tenantId))
    },

    /** The hook after a document was indexed: mark the profile stale and (debounced) schedule the extraction. */
    async onDocumentIndexed(tenantId: string): Promise<void> {
      await repo.markDirty(tenantId, clock.now())
      await enqueueExtraction(queue, clock, tenantId, settings.extractDelaySeconds)
    },

    // --- FAQ candidates ---
    async listFaq(tenantId: string, q: FaqListFilter) {
      const approved = q.approved === 'true' ? true : q.approved === 'false' ? false : null
      const source = !q.source || q.source === 'all' ? null : (q.source as FaqSource)
      const r = await repo.listFaq(tenantId, { approved, source, limit: q.limit ?? 50, offset: q.offset ?? 0 })
      return { items: r.items.map(presentFaq), total: r.total, pending_count: r.pending }
    },

    /** Editing the question un-approves the candidate (it has to be reviewed again); editing only the answer does not. */
    async updateFaq(tenantId: string, id: string, body: { question?: string; answer?: string }) {
      const current = await faqOr404(tenantId, id)
      const set: { question?: string; answer?: string; questionKey?: string; approved?: boolean } = {}
      if (body.question !== undefined) {
        const q = oneLine(body.question, 500)
        if (!q) throw new ValidationError(['body', 'question'], 'must not be blank')
        if (q !== current.question) {
          set.question = q
          set.questionKey = questionKey(q)
          set.approved = false
        }
      }
      if (body.answer !== undefined) {
        const a = body.answer.trim()
        if (!a) throw new ValidationError(['body', 'answer'], 'must not be blank')
        set.answer = a
      }
      const row = await repo.updateFaq(tenantId, id, set, clock.now())
      if (!row) throw notFound('FAQ candidate not found')
      return presentFaq(row)
    },

    async approveFaq(tenantId: string, id: string) {
      const row = await repo.updateFaq(tenantId, id, { approved: true }, clock.now())
      if (!row) throw notFound('FAQ candidate not found')
      return { id: row.id, approved: true as const }
    },

    async removeFaq(tenantId: string, id: string, how: 'rejected' | 'deleted') {
      if (!(await repo.tombstoneFaq(tenantId, id, how, clock.now()))) throw notFound('FAQ candidate not found')
      return { id, deleted: true as const }
    },

    async approveAll(tenantId: string) {
      return { approved_count: await repo.approveAll(tenantId, clock.now()) }
    },

    addCandidates,

    /**
     * An operator's ideal answer to a visitor's question, proposed as an FAQ candidate from the logs (approved at
     * once when the tenant auto-approves): once approved, retrieval answers the question with it. A question an FAQ
     * already asks (dedupeFaqs, tombstones included) adds nothing.
     */
    proposeIdealAnswer: async (tenantId: string, draft: { question: string; answer: string }, trx: Db = db): Promise<number> => {
      const drafts = sanitizeFaqPairs({ faqs: [{ ...draft, confidence: 1 }] }, 1)
      return drafts.length ? addCandidates(tenantId, drafts, 'logs', null, trx) : 0
    },

    /**
     * Retrieval's FAQ provider: approved FAQs whose question shares enough content terms with the query
     * (cosine of term sets, 0..1), best first. Lexical on purpose: no provider call on the answer path.
     */
    async faqSearch(tenantId: string, query: string, opts: { limit: number }): Promise<FaqHit[]> {
      const q = new Set(terms(query))
      if (q.size === 0) return []
      const rows = await approved.get(tenantId, () => repo.approvedFaqs(tenantId, MAX_ANSWERING_FAQS))
      return rows
        .map((r) => ({ id: r.id, question: r.question, answer: r.answer, score: Math.round(faqScore(q, r.question) * 10000) / 10000 }))
        .filter((h) => h.score >= settings.faqContextScore)
        .sort((a, b) => b.score - a.score)
        .slice(0, opts.limit)
    },
  }
}

export type KnowledgeService = ReturnType<typeof createKnowledgeService>
