import { byScoreThenId, chooseQueryTerms, DEFAULT_BM25, isExact, lexicalConfidence, planQuery, type QueryPlan, type TermStat } from './bm25.fns.js'
import { cosine, mmr, rrf, wordHashes } from './fusion.fns.js'
import type { ChunkDetail, CorpusRow, ScoredChunk } from './retrieval.repo.js'
import { ChunkDetailCache } from './detail-cache.js'
import { LexicalCache, scoreBm25, vocabularyOf, type LexicalEntry } from './lexical-cache.js'
import { chooseSources } from './passages.fns.js'
import { closest, corrections, slipDictionary, unknownTerms, type SlipDictionary } from './spelling.fns.js'
import { uiAlternates } from './ui-words.fns.js'
import { phrasingLexemes } from './relevance.fns.js'
import { normalize, topK, VectorCache } from './vector-cache.js'
import { createProbeFloors } from './floor-probes.js'
import { matrixRowBytes } from './simd-dot.js'
import { type VectorSearchMode, vectorSearchMode } from './vector-index.fns.js'
import { setBounded } from '../../lib/bounded.js'
import { regconfigFor } from '../documents/language.fns.js'

export type { FaqHit, FaqSearch, ModelWait, RetrievalDeps, RetrievalHit, RetrievalResult, SearchOptions, VectorPath } from './retrieval.types.js'
import type { FaqHit, ModelWait, RetrievalDeps, RetrievalHit, RetrievalResult, SearchOptions, VectorPath } from './retrieval.types.js'

/** Lists fed to fusion are this long; the final top-k is picked from the fused pool by MMR. */
const LIST_K = 30
const POOL_K = 20
/**
 * MMR's weight of relevance against novelty. 0.7 (the common default) traded too much relevance for variety:
 * tuned on SciFact train (hybrid without vectors, nDCG@10 0.7052 at 0.7, 0.7087 at 0.8, 0.7100 at 0.9, 0.7103 at
 * 1.0, BM25 alone 0.7108) and the visitor questions' dev split (answering page among the six, lexical 71.5 % at
 * 0.7, 74.4 % at 0.9, 75.0 % at 1.0; hybrid 74.4 / 75.6 / 74.4 %). 0.9 keeps near-duplicates apart at almost no cost.
 */
const MMR_LAMBDA = 0.9
const ms = (start: number) => Math.round((performance.now() - start) * 100) / 100

const TERMS_CACHE_MAX = 10_000
/** Unknown words whose correction (or none) is remembered per corpus version. */
const SLIPS_SEEN_MAX = 5_000

export function createRetrievalService(deps: RetrievalDeps) {
  const { repo } = deps
  const params = deps.bm25 ?? DEFAULT_BM25
  const cache = new VectorCache(deps.vectorCacheBytes)
  const postings = new LexicalCache(deps.lexicalCacheBytes ?? 0, deps.lexicalReloadMs)
  const detailCache = new ChunkDetailCache(deps.detailCacheBytes ?? 0)
  // A chunk's text never changes under its id (re-indexing makes new rows; an FAQ can be edited, so it is not
  // kept), so its word hashes for MMR are kept: popular chunks come back turn after turn. Oldest first out; about 0.6 KB an entry.
  const terms = new Map<string, Uint32Array>()
  const termsOf = (id: string, text: string): Uint32Array => {
    let h = terms.get(id)
    if (!h) {
      h = wordHashes(text)
      setBounded(terms, id, h, TERMS_CACHE_MAX)
    }
    return h
  }

  /**
   * BM25 top-k: exact, in process, when the tenant's postings fit the cache. Otherwise in SQL, over the chunks holding the query's rarest terms (MaxScore planning within the row
   * budget), every candidate scored on all terms. When the bound proves no other chunk can enter the
   * top-k it is exact; otherwise more rounds add terms and score only chunks not seen yet, up to
   * `lexicalRounds` (default 1: on BEIR SciFact the first round alone gives the same nDCG@10 as the exact
   * ranking at a third of the time), and always while there are fewer than k candidates (at most 3).
   */
  async function bm25TopK(tenantId: string, corpus: CorpusRow, terms: TermStat[], k: number): Promise<{ rows: ScoredChunk[]; plan: QueryPlan }> {
    const entry = await postings.get(tenantId, corpus.version, corpus.n, corpus.totalLen, () => repo.allTermVectors(tenantId, params.titleWeight ?? 1))
    if (entry) {
      const plan = planQuery(terms, corpus, deps.lexicalBudget, params)
      return { rows: scoreBm25(entry, plan, k, params), plan }
    }
    let budget = deps.lexicalBudget
    let seen: string[] = []
    let merged: ScoredChunk[] = []
    let candidates = 0
    let plan = planQuery(terms, corpus, budget, params)
    const rounds = deps.lexicalRounds ?? 1
    for (let round = 0; round < 3 && plan.terms.length > 0; round++) {
      const include = plan.essential.map((t) => t.term).filter((t) => !seen.includes(t))
      if (include.length > 0) {
        const r = await repo.bm25(tenantId, plan, k, params, include, seen)
        candidates += r.candidates
        merged = [...merged, ...r.rows].sort(byScoreThenId).slice(0, k)
        seen = plan.essential.map((t) => t.term)
      }
      if (isExact(plan, merged[k - 1]?.score, k, candidates)) break
      if (round + 1 >= rounds && candidates >= k) break
      budget *= 4
      plan = planQuery(terms, corpus, budget, params)
    }
    return { rows: merged, plan }
  }

  /**
   * Corpus statistics and the query's lexemes under one text-search configuration (chooseQueryTerms), with the
   * knowledge's spelling of a word the question mistyped beside it (spelling.fns.ts): from the postings in
   * process when the tenant's are loaded, else one look at the tenant's lexemes near the unknown ones.
   */
  async function queryTerms(tenantId: string, query: string): Promise<{ corpus: CorpusRow | null; terms: TermStat[] }> {
    const { corpus, terms: all } = await repo.corpusAndTerms(tenantId, query, uiAlternates(query))
    const chosen = chooseQueryTerms(all, regconfigFor(query))
    // "is there a way to ...": a lexeme only question phrasing made ranks at half weight, outside the coverage
    const phrasing = phrasingLexemes(
      query,
      chosen.map((t) => t.term),
    )
    const terms = phrasing.size ? chosen.map((t) => (phrasing.has(t.term) ? { ...t, phrasing: true } : t)) : chosen
    const unknown = corpus ? unknownTerms(terms) : []
    if (!corpus || unknown.length === 0) return { corpus, terms }
    const entry = await postings.get(tenantId, corpus.version, corpus.n, corpus.totalLen, () => repo.allTermVectors(tenantId, params.titleWeight ?? 1))
    const found = entry ? correctionsFrom(entry, unknown) : corrections(unknown, await repo.termsNear(tenantId, unknown))
    const known = new Set(terms.map((t) => t.term))
    return { corpus, terms: [...terms, ...found.filter((c) => !known.has(c.term))] }
  }

  /**
   * Spelling corrections from a tenant's loaded postings: the dictionary is built once per postings entry (a corpus
   * version) and each unknown word's correction is remembered with it, so a word seen before costs a lookup.
   */
  const slips = new WeakMap<LexicalEntry, { dict: SlipDictionary; seen: Map<string, { term: string; df: number } | null> }>()
  function correctionsFrom(entry: LexicalEntry, unknown: string[]): TermStat[] {
    let s = slips.get(entry)
    if (!s) slips.set(entry, (s = { dict: slipDictionary(vocabularyOf(entry)), seen: new Map() }))
    const out: TermStat[] = []
    const picked = new Set<string>()
    for (const u of unknown) {
      let c = s.seen.get(u)
      if (c === undefined) {
        c = closest(u, s.dict)
        setBounded(s.seen, u, c, SLIPS_SEEN_MAX)
      }
      if (c && !picked.has(c.term)) {
        picked.add(c.term)
        out.push({ term: c.term, df: c.df, corrects: u })
      }
    }
    return out
  }

  /**
   * The k chunks nearest a vector: pgvector (through the shared HNSW index for a workspace past its size, exactly
   * otherwise), else the in-process cache; null when the tenant's vectors do not fit it.
   */
  async function nearest(tenantId: string, corpus: CorpusRow, q: number[], k: number): Promise<{ rows: ScoredChunk[]; path: VectorPath } | null> {
    if (deps.features.vector) {
      const index = (await deps.vectorIndexes?.forSearch(corpus.nEmbedded, q.length, k)) ?? null
      if (index) {
        const rows = await repo.vectorSearch(tenantId, q, deps.embeddingModel, k, index)
        // short only when the iterative scan reached hnsw.max_scan_tuples (a workspace that is a sliver of the table):
        // the exact scan then, rather than fewer passages
        if (rows.length >= k) return { rows, path: 'index' }
      }
      return { rows: await repo.vectorSearch(tenantId, q, deps.embeddingModel, k), path: 'exact' }
    }
    const entry = await cache.get(tenantId, corpus.version, deps.embeddingModel, q.length, corpus.nEmbedded, () =>
      repo.allEmbeddings(tenantId, deps.embeddingModel),
    )
    if (!entry) return null
    return {
      rows: topK(entry, normalize(q), k).map((t) => ({ id: entry.ids[t.index]!, document_id: entry.docIds[t.index]!, score: t.score })),
      path: 'cache',
    }
  }

  /** Texts embedded under the service's model, at the indexer's dimensions; `wait` is told while the model is asked. */
  const embed = async (apiKey: string, input: string[], timeoutMs: number, signal?: AbortSignal, wait?: ModelWait) => {
    const end = wait?.begin()
    try {
      return await deps.llm.embed({
        apiKey,
        model: deps.embeddingModel,
        input,
        ...(deps.embeddingDimensions ? { dimensions: deps.embeddingDimensions } : {}),
        timeoutMs,
        signal,
      })
    } finally {
      end?.()
    }
  }

  const probeFloor = createProbeFloors({
    embed: async (apiKey, texts, wait) => (await embed(apiKey, texts, 10_000, undefined, wait)).vectors,
    nearest: async (tenantId, corpus, v) => (await nearest(tenantId, corpus, v, 1))?.rows[0]?.score ?? null,
  })

  async function vectors(
    tenantId: string,
    query: string,
    corpus: CorpusRow,
    opts: SearchOptions,
    lexicalIds: () => Promise<string[]>,
    embedded: () => void,
  ): Promise<{ rows: ScoredChunk[]; tokens: number; path: VectorPath } | null> {
    if (!opts.apiKey || corpus.nEmbedded === 0) return null
    let q: number[]
    let tokens = 0
    try {
      const r = await embed(opts.apiKey, [query], opts.embedTimeoutMs ?? 5000, opts.signal, opts.modelWait).finally(embedded)
      q = r.vectors[0] ?? []
      tokens = r.usage.total_tokens
    } catch (err) {
      deps.log?.warn({ err: { message: (err as Error).message } }, 'query embedding failed; lexical retrieval only')
      return null
    }
    if (q.length === 0) return null
    // a score that is not a number ranks nothing: the vector side keeps only real similarities (never NaN)
    const found = await nearest(tenantId, corpus, q, LIST_K)
    if (found) {
      const near = found.rows.filter((r) => Number.isFinite(r.score))
      return near.length ? { rows: near, tokens, path: found.path } : null
    }
    // too large for the cache: exact cosine over the lexical candidates only, of the query's width
    const rows = (await repo.embeddingsOf(tenantId, await lexicalIds(), deps.embeddingModel))
      .filter((r) => r.embedding.length === q.length)
      .map((r) => ({ id: r.id, document_id: r.document_id, score: cosine(q, r.embedding) }))
      .filter((r) => Number.isFinite(r.score))
      .sort((a, b) => b.score - a.score)
    return rows.length ? { rows, tokens, path: 'rerank' } : null
  }

  return {
    /**
     * The relevance floor's cosine for an embedding model of unknown scale, measured with off-topic probes against
     * the tenant's knowledge (floor-probes.ts); null when it cannot be (no vectors, none fit the cache, no provider).
     */
    probeFloor,

    /**
     * How the tenant's vectors are searched and, when they lose their own search (no pgvector, too large for the
     * in-process cache), why (vector-index.fns.ts vectorSearchMode): GET /llm/status shows it to the workspace.
     */
    async vectorSearchState(tenantId: string): Promise<{ mode: VectorSearchMode; embedded_chunks: number; detail: string | null }> {
      const { corpus } = await repo.corpusAndTerms(tenantId, '')
      const embedded = corpus?.nEmbedded ?? 0
      const dims = embedded > 0 ? await repo.embeddedWidth(tenantId, deps.embeddingModel) : null
      const state = vectorSearchMode({
        pgvector: deps.features.vector,
        embedded,
        dims,
        cacheNeeds: dims ? embedded * matrixRowBytes(dims) : 0,
        cacheBytes: deps.vectorCacheBytes,
        minChunks: deps.vectorIndexes?.minChunks ?? Number.POSITIVE_INFINITY,
        indexValid: dims !== null && deps.features.vector && !!(await deps.vectorIndexes?.valid(dims)),
      })
      return { ...state, embedded_chunks: embedded }
    },

    /**
     * After vectors were stored for the tenant: a workspace past RETRIEVAL_VECTOR_INDEX_MIN_CHUNKS whose model and width
     * have no valid index yet enqueues its build (deduplicated), so the index is there before its first question.
     */
    async embeddingsChanged(tenantId: string): Promise<void> {
      if (!deps.features.vector || !deps.vectorIndexes) return
      const { corpus } = await repo.corpusAndTerms(tenantId, '')
      if (!corpus || corpus.nEmbedded < deps.vectorIndexes.minChunks) return
      const dims = await repo.embeddedWidth(tenantId, deps.embeddingModel)
      if (dims) await deps.vectorIndexes.forSearch(corpus.nEmbedded, dims, 1)
    },

    /** BM25 only, chunk level (the retrieval benchmark uses it). */
    async lexical(tenantId: string, query: string, k: number): Promise<{ corpus: CorpusRow | null; rows: ScoredChunk[]; plan: QueryPlan | null }> {
      const { corpus, terms } = await queryTerms(tenantId, query)
      if (!corpus) return { corpus: null, rows: [], plan: null }
      return { corpus, ...(await bm25TopK(tenantId, corpus, terms, k)) }
    },

    /**
     * Hybrid retrieval: BM25 and (when the tenant has embeddings and a key is given) vector similarity in
     * parallel, plus approved FAQs, fused by RRF, diversified by MMR to the top k.
     */
    async search(tenantId: string, query: string, opts: SearchOptions = {}): Promise<RetrievalResult> {
      const k = opts.k ?? 6
      const timings: Record<string, number> = {}
      const t0 = performance.now()
      const { corpus, terms } = await queryTerms(tenantId, query)
      timings.stats = ms(t0)
      const faqP = deps.faqSearch
        ? deps.faqSearch(tenantId, query, { limit: 5 }).catch((err) => {
            deps.log?.warn({ err: { message: (err as Error).message } }, 'faq search failed')
            return [] as FaqHit[]
          })
        : Promise.resolve([] as FaqHit[])
      if (!corpus) {
        const faqs = await faqP
        const hits = faqs.map(faqHit)
        return {
          hits: hits.slice(0, k),
          corpusChunks: 0,
          bestScore: Math.max(0, ...hits.map((h) => h.confidence)),
          tokens: 0,
          timings,
          vectorUsed: false,
          queryTerms: terms,
          query,
        }
      }

      const tl = performance.now()
      const lexP = bm25TopK(tenantId, corpus, terms, LIST_K).then((r) => {
        timings.lexical = ms(tl)
        return r
      })
      const tv = performance.now()
      // a query embedding in flight: a cached one (a repeated question) is back at once, so only a real call counts
      let embedding = !!opts.apiKey && corpus.nEmbedded > 0
      const vecP = vectors(
        tenantId,
        query,
        corpus,
        opts,
        async () => (await lexP).rows.map((r) => r.id),
        () => (embedding = false),
      ).then((v) => {
        timings.vector = ms(tv)
        return v
      })
      // chunk details are read once per search, for the preliminary result and the final one
      const details = new Map<string, ChunkDetail>()
      const assemble = async (
        lex: { rows: ScoredChunk[]; plan: QueryPlan },
        vec: { rows: ScoredChunk[]; tokens: number; path: VectorPath } | null,
        faqs: FaqHit[],
        preliminary: boolean,
      ): Promise<RetrievalResult> => {
        const tf = performance.now()
        const lexById = new Map(lex.rows.map((r) => [r.id, r]))
        const vecById = new Map((vec?.rows ?? []).map((r) => [r.id, r]))
        const fused = rrf([{ items: lex.rows }, { items: vec?.rows ?? [] }, { items: faqs.map((f) => ({ id: `faq:${f.id}` })) }])
        const pool = [...fused.entries()].sort((a, b) => b[1] - a[1]).slice(0, POOL_K)
        const missing = pool.map(([id]) => id).filter((id) => !id.startsWith('faq:') && !details.has(id))
        if (missing.length) {
          const { found, missing: unread } = detailCache.take(tenantId, corpus.version, missing)
          for (const d of found) details.set(d.id, d)
          if (unread.length) {
            const read = await repo.details(tenantId, unread)
            detailCache.put(tenantId, corpus.version, read)
            for (const d of read) details.set(d.id, d)
          }
        }
        const faqById = new Map(faqs.map((f) => [`faq:${f.id}`, f]))
        const candidates: RetrievalHit[] = []
        for (const [id, score] of pool) {
          const faq = faqById.get(id)
          if (faq) {
            candidates.push({ ...faqHit(faq), score })
            continue
          }
          const d = details.get(id)
          if (!d) continue
          const l = lexById.get(id)
          const v = vecById.get(id)
          const lexConf = l ? lexicalConfidence(l.score, lex.plan) : null
          const title = hitTitle(d.doc_title || d.filename, d.heading_path || d.section_title)
          candidates.push({
            id,
            kind: 'chunk',
            documentId: d.document_id,
            title,
            url: d.source_url ?? d.doc_url ?? null,
            text: d.content,
            score,
            confidence: finiteOr0(Math.max(finiteOr0(lexConf), v ? Math.max(finiteOr0(v.score), 0) : 0)),
            bm25: l?.score ?? null,
            lexical: lexConf,
            vector: v?.score ?? null,
          })
        }
        const ordered = mmr(
          candidates.map((c) => ({ ...c, relevance: c.score, terms: c.kind === 'chunk' ? termsOf(c.id, c.text) : wordHashes(c.text) })),
          candidates.length,
          MMR_LAMBDA,
        ).map(({ relevance: _r, terms: _t, ...hit }) => hit as RetrievalHit)
        const picked = chooseSources(ordered, terms, { k, budgetTokens: opts.budgetTokens, corpusChunks: corpus.n })
        timings.fuse = ms(tf)
        timings.total = ms(t0)
        return {
          hits: picked,
          corpusChunks: corpus.n,
          bestScore: Math.max(0, ...picked.map((h) => h.confidence)),
          tokens: vec?.tokens ?? 0,
          timings: { ...timings },
          vectorUsed: vec !== null,
          ...(vec ? { vectorPath: vec.path } : {}),
          queryTerms: terms,
          query,
          corpus,
          ...(preliminary ? { preliminary } : {}),
        }
      }
      const [lex, faqs] = await Promise.all([lexP, faqP])
      // the query embedding still in flight after the grace: what BM25 and the FAQs found goes out first (SearchOptions.onLexical)
      if (opts.onLexical && embedding && opts.lexicalGraceMs) {
        let timer: NodeJS.Timeout | undefined
        await Promise.race([vecP, new Promise((r) => (timer = setTimeout(r, opts.lexicalGraceMs)))])
        clearTimeout(timer)
      }
      if (opts.onLexical && embedding) {
        try {
          opts.onLexical(await assemble(lex, null, faqs, true))
        } catch (err) {
          deps.log?.warn({ err: { message: (err as Error).message } }, 'preliminary retrieval result failed')
        }
      }
      return assemble(lex, await vecP, faqs, false)
    },
  }
}

/** A score that is not a finite number (a zero vector's cosine in pgvector is NaN) counts as none. */
const finiteOr0 = (x: number | null | undefined): number => (typeof x === 'number' && Number.isFinite(x) ? x : 0)

/** "Guide — Install > Linux": the document, then where in it; a heading path that repeats the title loses it. */
export function hitTitle(docTitle: string, headingPath: string | null): string {
  if (!headingPath) return docTitle
  const parts = headingPath.split(' > ')
  if (parts[0]?.trim().toLowerCase() === docTitle.trim().toLowerCase()) parts.shift()
  return parts.length ? `${docTitle} — ${parts.join(' > ')}` : docTitle
}

function faqHit(f: FaqHit): RetrievalHit {
  return {
    id: `faq:${f.id}`,
    kind: 'faq',
    documentId: null,
    title: f.question,
    url: null,
    text: `Q: ${f.question}\nA: ${f.answer}`,
    score: 0,
    confidence: Math.max(0, Math.min(1, f.score)),
    bm25: null,
    lexical: null,
    vector: null,
  }
}

export type RetrievalService = ReturnType<typeof createRetrievalService>
