/**
 * Grounding figures (npm run bench:grounding): does the service refuse what its knowledge does not cover,
 * and answer what it does, when the guard model says "relevant" to everything?
 *
 * Knowledge: the DuckDuckGo help centre (BENCH_DOCS, default ../shared/data/docs-corpus/duckduckgo-help-pages;
 * MIT), every page of `_docs/` except redirects and pages excluded from the site's search, uploaded as
 * markdown files through POST /documents into an app running in this process (PGlite; BENCH_DATABASE_URL=
 * postgres://... uses a scratch database there), with the fake model (test/fakes/fake-llm.ts) in process:
 * its guard says "relevant" to everything, its embeddings are hashed bags of words and trigrams.
 *
 * Questions (BENCH_QUESTIONS): by default bench/grounding-visitor-questions.json, written the way visitors ask, from
 * page titles and tasks before reading any page (see its .md); bench/grounding-questions.json is an older set written
 * while reading the pages. Each holds questions the pages answer (with the page that does) and at least as many they
 * do not: near-misses in the same domain, other products' features, other domains, nonsense. Every third question
 * of each kind is held out (`split`): tune on `dev` only, `heldout` is reported apart.
 *
 * 1. Calibration (BENCH_CALIBRATE=1): each question through the retrieval service the turn uses; the relevance floor's
 *    inputs (lexical coverage, top cosine) and, per threshold, the false-answer and false-refusal rates
 *    on dev; the chosen thresholds' figures on held-out.
 * 2. End to end (BENCH_MODES, default vectors,floats,lexical): each question through POST /chat, with vectors (an embedding server
 *    answering base64), with one answering float arrays whatever is asked (Ollama-like), and then lexical only (query embeddings fail), with the app's configuration (RETRIEVAL_FLOOR_* from the environment, else the defaults).
 *    An answer is a reply that cites documents (source_documents not empty); a refusal is anything
 *    else (the "not covered" hand-off, a refusal). False answer: an answer to an uncovered question;
 *    false refusal: no answer to a covered one. "right page": a covered answer citing the page that answers it.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { cosineFor, relevance } from '../src/modules/retrieval/relevance.fns.js'
import { createRetrievalRepo } from '../src/modules/retrieval/retrieval.repo.js'
import { createRetrievalService } from '../src/modules/retrieval/retrieval.service.js'
import { FAKE_EMBEDDING_FLOOR, startFakeLlm } from '../test/fakes/fake-llm.js'
import { FakeSmtp, tokenFromMail } from '../test/fakes/smtp.js'
import { benchService, helpPages, jsonCaller } from './support.js'
import { loadPassages, median, reached } from './passages.js'
import { packPassages } from '../src/modules/retrieval/passages.fns.js'

const DOCS = process.env.BENCH_DOCS ?? '../shared/data/docs-corpus/duckduckgo-help-pages'
const PG_URL = process.env.BENCH_DATABASE_URL
/**
 * A real model instead of the fake (BENCH_LLM_BASE_URL, an OpenAI-compatible /v1, with BENCH_LLM_API_KEY; CHAT_MODEL,
 * GUARD_MODEL, EMBEDDING_MODEL and EMBEDDING_DIMENSIONS from the environment): the same questions through the same
 * pipeline, with the relevance guard switched off (GUARD_RELEVANCE_ENABLED=false: "relevant" to everything) and
 * vectors only (the lexical pass needs the fake to fail embeddings). About four model calls a question.
 */
const REAL_LLM = process.env.BENCH_LLM_BASE_URL
const LLM_KEY = REAL_LLM ? (process.env.BENCH_LLM_API_KEY ?? '') : 'sk-bench-0123456789'
const MODEL_ENV = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => REAL_LLM && ['CHAT_MODEL', 'GUARD_MODEL', 'EMBEDDING_MODEL', 'EMBEDDING_DIMENSIONS'].includes(k)),
) as Record<string, string>
/** The visitor-like set (written from titles before reading pages) by default; bench/grounding-questions.json is the older page-read set. */
const QUESTIONS = process.env.BENCH_QUESTIONS ?? 'bench/grounding-visitor-questions.json'
/** BENCH_REWRITE=1: the search-query rewrite's cost per turn (RETRIEVAL_QUERY_REWRITE=weak|always turns it on). */
const REWRITE = !!process.env.BENCH_REWRITE
/**
 * `vectors`: the embedding server answers base64 when asked (as OpenAI does); `floats`: it answers float arrays
 * whatever is asked (Ollama, TEI, Infinity, LM Studio: issue 37), with the query embeddings of that server; the
 * "answer passage reached the model" figures of the two must be equal.
 */
const MODES = (process.env.BENCH_MODES ?? 'vectors,floats,lexical').split(',') as ('vectors' | 'floats' | 'lexical')[]
/**
 * BENCH_MODEL_MS=300: every chat call and query embedding of the fake takes this long (default 0: at once), as a
 * provider's do, so the early answer (CHAT_SPECULATIVE_ANSWER) starts on the lexical evidence while the embedding is in
 * flight and is kept or restarted as in production; at 0 the embedding is back before the answer could start.
 */
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 0)

interface Question {
  id: string
  q: string
  covered: boolean
  kind: string
  pages: string[]
  split: 'dev' | 'heldout'
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pc = (x: number) => `${(100 * x).toFixed(1)} %`

interface Outcome {
  q: Question
  answered: boolean
  rightPage: boolean
  /** A covered question refused although its page was among the retrieved sources (the verdict's miss, not retrieval's). */
  refusedWithPage?: boolean
  /** A covered question's page was among the retrieved sources. */
  retrieved?: boolean
  /** What refused a covered question: the relevance floor, the minimum score, or the answer model's verdict. */
  refusedBy?: 'floor' | 'min_score' | 'verdict' | 'other'
  /** The labelled answering passage was in the prompt of the turn's last generation call (undefined: no label). */
  reached?: boolean
  /** That prompt's size in tokens (about four characters a token), when the turn called the answer model. */
  promptTokens?: number
}

/** Which stage refused a turn, from its debug record. */
function refusedBy(debug: Record<string, any> | undefined): Outcome['refusedBy'] {
  if (!debug) return 'other'
  if (debug.floor && debug.floor.grounded === false) return 'floor'
  if (debug.decision?.by === 'answer_model') return 'verdict'
  if (debug.decision?.kind === 'escalate' && debug.decision.trigger === 'low_similarity') return 'min_score'
  return 'other'
}

function rates(outcomes: Outcome[]) {
  const cov = outcomes.filter((o) => o.q.covered)
  const unc = outcomes.filter((o) => !o.q.covered)
  const falseAnswer = unc.filter((o) => o.answered).length / Math.max(1, unc.length)
  const falseRefusal = cov.filter((o) => !o.answered).length / Math.max(1, cov.length)
  const rightPage = cov.filter((o) => o.rightPage).length / Math.max(1, cov.length)
  const withPage = cov.filter((o) => o.refusedWithPage).length
  const retrieved = cov.filter((o) => o.retrieved).length / Math.max(1, cov.length)
  const by = (k: Outcome['refusedBy']) => cov.filter((o) => !o.answered && o.refusedBy === k).length
  const refusedBy = `floor ${by('floor')}, min score ${by('min_score')}, verdict ${by('verdict')}, other ${by('other')}`
  const labelled = cov.filter((o) => o.reached !== undefined)
  const reachedShare = labelled.filter((o) => o.reached).length / Math.max(1, labelled.length)
  const sizes = outcomes.flatMap((o) => (o.promptTokens !== undefined ? [o.promptTokens] : []))
  const prompt = `median ${median(sizes).toFixed(0)} tokens, p90 ${(sizes.sort((a, b) => a - b)[Math.floor(sizes.length * 0.9)] ?? 0).toFixed(0)} over ${sizes.length} generation turns`
  return {
    falseAnswer,
    falseRefusal,
    rightPage,
    withPage,
    retrieved,
    refusedBy,
    covered: cov.length,
    uncovered: unc.length,
    reached: reachedShare,
    labelled: labelled.length,
    prompt,
  }
}

function byKind(outcomes: Outcome[]): string {
  const kinds = [...new Set(outcomes.filter((o) => !o.q.covered).map((o) => o.q.kind))]
  return kinds
    .map((k) => {
      const xs = outcomes.filter((o) => o.q.kind === k)
      return `${k} ${xs.filter((o) => o.answered).length}/${xs.length}`
    })
    .join(', ')
}

async function main() {
  if (!existsSync(join(DOCS, '_docs'))) {
    console.log(`no help centre at ${DOCS} (BENCH_DOCS): nothing to measure`)
    return
  }
  const questions = JSON.parse(readFileSync(QUESTIONS, 'utf8')) as Question[]
  console.log(`questions: ${QUESTIONS}`)
  const pages = helpPages(DOCS)
  const passages = loadPassages(DOCS)
  console.log(
    passages
      ? `answering passages: ${passages.size} labelled (${[...passages.values()].filter((x) => !x).length} with none on the page)`
      : 'answering passages: no labels',
  )
  const fake = await startFakeLlm()
  const smtp = await new FakeSmtp().start()
  // the retrieval and chunking settings from the environment (RETRIEVAL_FLOOR_*, RETRIEVAL_TOP_K, CHUNK_TARGET_TOKENS, ...), and
  // the early answer's (CHAT_SPECULATIVE_ANSWER=false, CHAT_EARLY_ANSWER_FROM_BM25=false): an early answer kept or restarted
  // depends on when the query embedding arrives, so two runs of one question set differ by a point or two with it on
  const floorEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => k.startsWith('RETRIEVAL_') || k.startsWith('CHUNK_') || k === 'CHAT_SPECULATIVE_ANSWER' || k === 'CHAT_EARLY_ANSWER_FROM_BM25',
    ),
  )
  const service = await benchService(
    'grounding',
    {
      NODE_ENV: 'production',
      SMTP_URL: smtp.url,
      LLM_BASE_URL: REAL_LLM ?? fake.url,
      ...(REAL_LLM ? { GUARD_RELEVANCE_ENABLED: 'false', ...MODEL_ENV } : {}),
      // BENCH_EMBEDDING_MODEL: the fake's vectors under another name; one of unknown scale has its floor measured with probes
      ...(!REAL_LLM && process.env.BENCH_EMBEDDING_MODEL ? { EMBEDDING_MODEL: process.env.BENCH_EMBEDDING_MODEL } : {}),
      LOG_LEVEL: 'error',
      UPLOAD_RATE_PER_HOUR: '10000',
      WORKER_POLL_MS: '50',
      KNOWLEDGE_EXTRACT_DELAY_SECONDS: '86400',
      // the fake's hashed vectors are not text-embedding-3-small's scale (BENCH_CALIBRATE finds theirs)
      ...(REAL_LLM ? {} : FAKE_EMBEDDING_FLOOR),
      ...floorEnv,
    },
    PG_URL,
  )
  const { ctx, config, url: base } = service
  // the retrieval a turn runs, configured as chat.wire.ts does (the floor's inputs for calibration)
  const retrieval = createRetrievalService({
    repo: createRetrievalRepo(ctx.db, ctx.database.features),
    llm: ctx.llm,
    features: ctx.database.features,
    embeddingModel: config.EMBEDDING_MODEL,
    embeddingDimensions: config.EMBEDDING_DIMENSIONS ?? (/^text-embedding-3/.test(config.EMBEDDING_MODEL) ? 1536 : undefined),
    lexicalBudget: config.RETRIEVAL_LEXICAL_BUDGET,
    vectorCacheBytes: config.RETRIEVAL_VECTOR_CACHE_MB * 1024 * 1024,
    lexicalCacheBytes: config.RETRIEVAL_LEXICAL_CACHE_MB * 1024 * 1024,
  })
  const call = jsonCaller(base)

  try {
    const email = `bench-${randomBytes(4).toString('hex')}@example.test`
    await call('POST', '/auth/register', {}, { email, password: 'Corr3ct-Horse!' })
    const mail = await smtp.waitFor((m) => m.to.includes(email))
    const verified = await call('POST', '/auth/verify-email', {}, { token: tokenFromMail(mail) })
    const jwt = { authorization: `Bearer ${verified.body.token}` }
    const apiKey = { 'x-api-key': verified.body.api_key as string }
    const tenantId = verified.body.user.tenant_id as string
    await call('PATCH', '/tenants/me', jwt, { llm_api_key: LLM_KEY })

    // the help centre, uploaded as a docs folder would be
    const t0 = performance.now()
    const pageOf = new Map<string, string>()
    const pending: string[] = []
    for (const p of pages) {
      const form = new FormData()
      form.append('file', new Blob([p.text]), p.path.replace(/\//g, '__'))
      const r = await call('POST', '/documents', jwt, form)
      if (r.status !== 201) throw new Error(`upload ${p.path}: ${r.status} ${JSON.stringify(r.body)}`)
      pageOf.set(r.body.id, p.path)
      pending.push(r.body.id)
    }
    for (const id of pending) {
      for (;;) {
        const d = await call('GET', `/documents/${id}`, jwt)
        if (d.body.status !== 'processing') break
        await sleep(100)
      }
    }
    const chunks = await ctx.db
      .selectFrom('chunks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow()
    console.log(
      `knowledge: ${pages.length} pages, ${chunks.n} chunks, indexed in ${((performance.now() - t0) / 1000).toFixed(1)} s; questions: ${questions.filter((q) => q.covered).length} covered, ${questions.filter((q) => !q.covered).length} not (dev ${questions.filter((q) => q.split === 'dev').length}, held-out ${questions.filter((q) => q.split === 'heldout').length})`,
    )

    // BENCH_EXPLAIN="question|question": each question's lexemes and its six hits with their scores, then stop
    if (process.env.BENCH_EXPLAIN) {
      for (const q of process.env.BENCH_EXPLAIN.split('|')) {
        const found = await retrieval.search(tenantId, q, { apiKey: null, k: config.RETRIEVAL_TOP_K })
        console.log(
          `${q}\n  terms: ${found.queryTerms.map((t) => `${t.term}:${t.df}${t.alt ? ' (alt)' : ''}${t.phrasing ? ' (phrasing)' : ''}${t.corrects ? ` (for ${t.corrects})` : ''}`).join(' ')}`,
        )
        for (const h of found.hits) console.log(`  ${(h.bm25 ?? 0).toFixed(2)} ${h.text.length} chars  ${h.title}`)
      }
      return
    }

    // 1. calibration on the floor's inputs (BENCH_CALIBRATE=1)
    if (process.env.BENCH_CALIBRATE === '1' || process.env.BENCH_ONLY_CALIBRATION === '1')
      await calibrate(questions, async (q, vectors) => {
        const found = await retrieval.search(tenantId, q, { apiKey: vectors ? LLM_KEY : null, k: config.RETRIEVAL_TOP_K })
        const r = relevance(found.query, found.queryTerms, found.corpusChunks, found.hits, { lexical: 1, cosine: null })
        if (process.env.BENCH_DUMP === '1' && !vectors)
          console.log(
            `  ${q} -> ${found.queryTerms.map((t) => `${t.term}:${t.df}`).join(' ')} | ${found.hits
              .slice(0, 3)
              .map((h) => h.title)
              .join(' | ')}`,
          )
        return { lexical: r.lexical, vector: r.vector }
      })

    if (process.env.BENCH_ONLY_CALIBRATION === '1') return
    // retrieval alone (BENCH_RETRIEVAL=1): is the answering page among the top sources of each covered question?
    if (process.env.BENCH_RETRIEVAL === '1') {
      for (const vectors of [false, true]) {
        const hit = { dev: [0, 0], heldout: [0, 0] }
        for (const q of questions.filter((x) => x.covered)) {
          const found = await retrieval.search(tenantId, q.q, { apiKey: vectors ? LLM_KEY : null, k: config.RETRIEVAL_TOP_K })
          const seen = found.hits.map((h) => pageOf.get(h.documentId ?? ''))
          const ok = q.pages.some((p) => seen.includes(p))
          hit[q.split][0] += ok ? 1 : 0
          hit[q.split][1]++
          if (!ok && process.env.BENCH_DUMP === '1' && q.split === 'dev')
            console.log(
              `  miss ${q.id}: ${q.q} -> ${found.hits
                .slice(0, 3)
                .map((h) => h.title)
                .join(' | ')}`,
            )
        }
        console.log(
          `retrieval ${vectors ? 'hybrid' : 'lexical'}: answering page in the top ${config.RETRIEVAL_TOP_K}: dev ${pc(hit.dev[0] / hit.dev[1])}, held-out ${pc(hit.heldout[0] / hit.heldout[1])}`,
        )
        // the answering passage among the top k hits' texts, and their size, for a few k (dev only: tuning)
        if (passages)
          for (const k of (process.env.BENCH_KS ?? '6,8,12,20').split(',').map(Number)) {
            let n = 0
            let got = 0
            const sizes: number[] = []
            for (const q of questions.filter((x) => x.covered && x.split === 'dev')) {
              const passage = passages.get(q.id)
              if (!passage) continue
              const found = await retrieval.search(tenantId, q.q, { apiKey: vectors ? LLM_KEY : null, k })
              const text = found.hits.map((h) => `${h.title}\n${h.text}`).join('\n')
              n++
              if (reached(passage, text)) got++
              else if (process.env.BENCH_DUMP === '3' && vectors) {
                const deep = await retrieval.search(tenantId, q.q, { apiKey: LLM_KEY, k: 20 })
                const rank = deep.hits.findIndex((h) => q.pages.includes(pageOf.get(h.documentId ?? '') ?? ''))
                console.log(`  miss rank ${rank} ${q.id}: ${q.q} (${q.pages[0]}) terms ${found.queryTerms.map((t) => `${t.term}:${t.df}`).join(' ')}`)
              } else if (process.env.BENCH_DUMP === '2' && vectors)
                console.log(
                  `  k${k} miss ${q.id} [${found.hits.some((h) => q.pages.includes(pageOf.get(h.documentId ?? '') ?? '')) ? 'page in' : 'no page'}] ${q.q} (${q.pages[0]}) -> ${found.hits
                    .slice(0, 3)
                    .map((h) => h.title.slice(0, 50))
                    .join(' | ')}`,
                )
              sizes.push(Math.ceil(text.length / 4))
            }
            console.log(`  k ${k}: answer passage in the hits ${pc(got / n)} (of ${n} dev), hits median ${median(sizes)} tokens`)
          }
        // BENCH_PACK="budget,max,window;...": the passages packed from the top 20 under a token budget; dev, and the
        // held-out split as a total only (never question by question)
        if (passages && process.env.BENCH_PACK)
          for (const spec of process.env.BENCH_PACK.split(';')) {
            const [budgetTokens, maxPassages, windowTokens] = spec.split(',').map(Number) as [number, number, number]
            const figures: string[] = []
            for (const split of ['dev', 'heldout'] as const) {
              let n = 0
              let got = 0
              const sizes: number[] = []
              for (const q of questions.filter((x) => x.covered && x.split === split)) {
                const passage = passages.get(q.id)
                if (!passage) continue
                const found = await retrieval.search(tenantId, q.q, { apiKey: vectors ? LLM_KEY : null, k: 20 })
                const packed = packPassages(found.hits, found.queryTerms, { budgetTokens, maxPassages, windowTokens, corpusChunks: found.corpusChunks })
                const text = packed.map((h) => `${h.title}\n${h.text}`).join('\n')
                n++
                if (reached(passage, text)) got++
                sizes.push(Math.ceil(text.length / 4))
              }
              figures.push(`${split} ${pc(got / Math.max(1, n))} (of ${n}), median ${median(sizes)} tokens`)
            }
            console.log(`  pack ${spec}: answer passage in the sources ${figures.join('; ')}`)
          }
      }
      return
    }
    // 2. end to end through POST /chat
    const cosine = cosineFor(config.RETRIEVAL_FLOOR_COSINE, config.EMBEDDING_MODEL)
    console.log(
      `\nPOST /chat, guard says "relevant" to everything; RETRIEVAL_FLOOR_LEXICAL ${config.RETRIEVAL_FLOOR_LEXICAL}, cosine ${cosine === undefined ? 'measured with off-topic probes' : (cosine ?? 'none')} for ${config.EMBEDDING_MODEL}`,
    )
    if (REAL_LLM) console.log(`model: ${config.CHAT_MODEL} (guard ${config.GUARD_MODEL}, embeddings ${config.EMBEDDING_MODEL}) at ${REAL_LLM}`)
    for (const mode of MODES) {
      if (REAL_LLM && mode !== 'vectors') {
        console.log(`${mode}: skipped with a real model (it needs the fake to fail or change the query embeddings)`)
        continue
      }
      fake.reset()
      // BENCH_REWRITE with the fake: a rewrite that changes the text but not the words (reversed word order), so the
      // second retrieval and the fusion run and their cost is measured; the quality figure is then meaningless
      if (REWRITE && !REAL_LLM) fake.searchQueryAs((q) => q.split(/\s+/).reverse().join(' '))
      const rewrites: { tokens: number; ms: number; used: boolean; weak: boolean }[] = []
      if (mode === 'lexical') {
        fake.fail('malformed', { match: (r) => r.path.endsWith('/embeddings') })
        // another key: the query embeddings of the first pass are cached per key, model and text
        await call('PATCH', '/tenants/me', jwt, { llm_api_key: `${LLM_KEY}-lexical` })
      }
      if (MODEL_MS > 0 && !REAL_LLM) {
        fake.script(() => ({ delayMs: MODEL_MS }))
        if (mode !== 'lexical') fake.fail('slow_first_token', { match: (r) => r.path.endsWith('/embeddings'), delayMs: MODEL_MS })
      }
      if (mode === 'floats') {
        fake.behaveAs({ floatEmbeddings: true })
        await call('PATCH', '/tenants/me', jwt, { llm_api_key: `${LLM_KEY}-floats` })
      }
      const outcomes: Outcome[] = []
      /** the early answer's fate over the covered questions (kept, restarted and why) */
      const speculation: Record<string, number> = {}
      const t1 = performance.now()
      for (const q of questions) {
        const before = fake.chatCalls().length
        const r = await call('POST', '/chat', apiKey, { question: q.q })
        if (r.status !== 200) throw new Error(`chat ${q.id}: ${r.status} ${JSON.stringify(r.body)}`)
        const cited = (r.body.source_documents as string[]).map((id) => pageOf.get(id))
        const o: Outcome = { q, answered: cited.length > 0, rightPage: q.pages.some((p) => cited.includes(p)) }
        outcomes.push(o)
        // the turn's last generation call: its prompt's size, and whether the labelled answer was in it
        const generation = fake
          .chatCalls()
          .slice(before)
          .filter((c) => !c.json && c.messages.some((m) => m.role === 'system' && m.content.includes('=== Sources ===')))
          .pop()
        const prompt = generation?.messages.map((m) => m.content).join('\n') ?? ''
        if (generation) o.promptTokens = Math.ceil(prompt.length / 4)
        const passage = passages?.get(q.id)
        if (q.covered && passage) o.reached = reached(passage, prompt)
        if (process.env.BENCH_DUMP_MISSES === '1' && q.covered && passage && !o.reached && q.split === 'dev') console.log(`  not reached ${q.id}: ${q.q}`)
        if (REWRITE) {
          const log = await call('GET', `/chat/logs/session/${r.body.session_id}`, jwt)
          const sr = log.body?.messages?.find((m: { debug: unknown }) => m.debug)?.debug?.search_rewrite
          if (sr?.tokens !== undefined) rewrites.push({ tokens: sr.tokens, ms: sr.ms, used: sr.used, weak: sr.weak })
        }
        if (q.covered) {
          // was the answering page among the sources the model saw? (retrieval's miss, or the verdict's)
          const log = await call('GET', `/chat/logs/session/${r.body.session_id}`, jwt)
          const debug = log.body?.messages?.find((m: { debug: unknown }) => m.debug)?.debug
          const seen = ((debug?.retrieval?.hits ?? []) as { document_id: string | null }[]).map((h) => pageOf.get(h.document_id ?? ''))
          o.retrieved = q.pages.some((p) => seen.includes(p))
          const sp = `${debug?.speculation ?? 'none'}${debug?.speculation_why ? `:${debug.speculation_why}` : ''}`
          speculation[sp] = (speculation[sp] ?? 0) + 1
          o.refusedWithPage = !o.answered && o.retrieved
          if (!o.answered) o.refusedBy = refusedBy(debug)
        }
        if (process.env.BENCH_DUMP === '1' && q.covered !== cited.length > 0) {
          const log = await call('GET', `/chat/logs/session/${r.body.session_id}`, jwt)
          const debug = log.body?.messages?.find((m: { debug: unknown }) => m.debug)?.debug
          console.log(
            `  ${mode} ${q.id} ${q.split} ${q.covered ? 'refused' : 'answered'}: ${q.q} -> ${JSON.stringify({ floor: debug?.floor, decision: debug?.decision, best: debug?.retrieval?.best })}`,
          )
        }
      }
      const ms = (performance.now() - t1) / questions.length
      for (const split of ['dev', 'heldout'] as const) {
        const xs = outcomes.filter((o) => o.q.split === split)
        const r = rates(xs)
        console.log(
          `${mode.padEnd(8)} ${split.padEnd(8)} false answers ${pc(r.falseAnswer).padStart(7)} (of ${r.uncovered})  false refusals ${pc(r.falseRefusal).padStart(7)} (of ${r.covered}; ${r.withPage} with the page retrieved; refused by ${r.refusedBy})  page retrieved ${pc(r.retrieved)}, cited ${pc(r.rightPage)}  answered: ${byKind(xs)}`,
        )
        console.log(
          `${mode.padEnd(8)} ${split.padEnd(8)} answer passage in the generation prompt ${pc(r.reached)} (of ${r.labelled} labelled covered questions); prompt ${r.prompt}`,
        )
      }
      console.log(`${mode.padEnd(8)} ${ms.toFixed(1)} ms per turn; early answer over the covered questions: ${JSON.stringify(speculation)}`)
      if (REWRITE) printRewriteCost(mode, config.RETRIEVAL_QUERY_REWRITE, questions.length, rewrites)
    }
  } finally {
    await service.close()
    await smtp.stop()
    await fake.close()
  }
}

/** The rewrite's tokens and added latency (the call and the second retrieval) over the turns that made the call. */
function printRewriteCost(mode: string, setting: string, turns: number, xs: { tokens: number; ms: number; used: boolean; weak: boolean }[]) {
  const sum = (f: (x: (typeof xs)[number]) => number) => xs.reduce((a, x) => a + f(x), 0)
  const ms = xs.map((x) => x.ms).sort((a, b) => a - b)
  console.log(
    `${mode.padEnd(8)} query rewrite (${setting}): called on ${xs.length} of ${turns} turns (${xs.filter((x) => x.used).length} fused); per called turn ${(sum((x) => x.tokens) / Math.max(1, xs.length)).toFixed(1)} tokens, added ${(sum((x) => x.ms) / Math.max(1, xs.length)).toFixed(1)} ms mean (median ${median(ms).toFixed(1)}, max ${(ms.at(-1) ?? 0).toFixed(1)}); per turn ${(sum((x) => x.tokens) / Math.max(1, turns)).toFixed(1)} tokens, ${(sum((x) => x.ms) / Math.max(1, turns)).toFixed(1)} ms`,
  )
  if (!REAL_LLM)
    console.log(
      `${mode.padEnd(8)} query rewrite: the fake model cannot rewrite (its "rewrite" reverses the word order, to run the plumbing): the passage figures above say nothing of the rewrite's quality; measure it with a real model (BENCH_LLM_BASE_URL=...)`,
    )
}

type Features = { lexical: number; vector: number | null }

/** Per threshold, the rates on dev; the best lexical threshold (and cosine, with vectors) and its held-out figures. */
async function calibrate(questions: Question[], features: (q: string, vectors: boolean) => Promise<Features>) {
  const rows: { q: Question; lex: Features; vec: Features }[] = []
  for (const q of questions) rows.push({ q, lex: await features(q.q, false), vec: await features(q.q, true) })
  if (process.env.BENCH_DUMP === '1')
    for (const r of rows) console.log(`${r.q.id} ${r.q.split} ${r.q.kind} lex ${r.lex.lexical.toFixed(2)} vec ${r.vec.vector?.toFixed(2)} ${r.q.q}`)
  const judge = (split: string, pass: (r: (typeof rows)[number]) => boolean) =>
    rates(rows.filter((r) => r.q.split === split).map((r) => ({ q: r.q, answered: pass(r), rightPage: false })))
  const grid = Array.from({ length: 19 }, (_, i) => Math.round((i + 1) * 5) / 100)
  // the cost: a false answer weighs twice a false refusal (the targets: < 5 % and < 10 %)
  const cost = (x: { falseAnswer: number; falseRefusal: number }) => 2 * x.falseAnswer + x.falseRefusal
  console.log('\ncalibration (dev): lexical coverage threshold -> false answers / false refusals')
  let best = { t: 0.5, c: Infinity }
  const line: string[] = []
  for (const t of grid) {
    const r = judge('dev', (x) => x.lex.lexical >= t)
    line.push(`${t.toFixed(2)}: ${pc(r.falseAnswer)} / ${pc(r.falseRefusal)}`)
    if (cost(r) < best.c) best = { t, c: cost(r) }
  }
  for (let i = 0; i < line.length; i += 4) console.log(`  ${line.slice(i, i + 4).join('   ')}`)
  const held = judge('heldout', (x) => x.lex.lexical >= best.t)
  const dev = judge('dev', (x) => x.lex.lexical >= best.t)
  console.log(
    `lexical floor chosen on dev: ${best.t} -> dev ${pc(dev.falseAnswer)} / ${pc(dev.falseRefusal)}, held-out ${pc(held.falseAnswer)} / ${pc(held.falseRefusal)}`,
  )
  // vectors: does a cosine threshold (on top of the lexical floor) add answers without adding false ones?
  const withVectors = rows.filter((r) => r.vec.vector !== null).length
  if (withVectors === 0) return
  let bestV = { c: Infinity, t: null as number | null, lx: best.t }
  const cosGrid = [null, ...Array.from({ length: 14 }, (_, i) => Math.round((0.3 + i * 0.05) * 100) / 100)]
  for (const lx of grid) {
    for (const cs of cosGrid) {
      const r = judge('dev', (x) => x.vec.lexical >= lx || (cs !== null && (x.vec.vector ?? -1) >= cs))
      if (cost(r) < bestV.c - 1e-9) bestV = { c: cost(r), t: cs, lx }
    }
  }
  const pass = (x: (typeof rows)[number]) => x.vec.lexical >= bestV.lx || (bestV.t !== null && (x.vec.vector ?? -1) >= bestV.t)
  const dv = judge('dev', pass)
  const hv = judge('heldout', pass)
  const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))] ?? NaN
  const cos = (covered: boolean) => rows.filter((r) => r.q.split === 'dev' && r.q.covered === covered).map((r) => r.vec.vector ?? 0)
  console.log(
    `top cosine of this embedder on dev: covered median ${q(cos(true), 0.5).toFixed(3)} (p10 ${q(cos(true), 0.1).toFixed(3)}), uncovered median ${q(cos(false), 0.5).toFixed(3)} (p90 ${q(cos(false), 0.9).toFixed(3)})`,
  )
  console.log(
    `with vectors, chosen on dev: lexical ${bestV.lx}, cosine ${bestV.t ?? 'none'} -> dev ${pc(dv.falseAnswer)} / ${pc(dv.falseRefusal)}, held-out ${pc(hv.falseAnswer)} / ${pc(hv.falseRefusal)}`,
  )
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
