/**
 * bench:scale's recall of the index path against the exact scan, at one or several `hnsw.ef_search` values
 * (SCALE_EF_SWEEP=40,100,200,400; default the run's SCALE_EF_SEARCH).
 *
 * Per value: recall@40 (the exact top 40's rows the index path returned), the ann-benchmarks style recall with a
 * distance tolerance (a returned row counts when its distance is within the exact 40th's x (1 + 1e-3): ties and
 * near-ties at the border are not misses), whether the question's page is in the vector side's top 6 and top 40, and
 * the index statement's own p50/p95 and PostgreSQL CPU (the product's statement: repo.vectorSearch with the index).
 * The exact top 40 of each question is computed once and shared by all values.
 */
import type { ScoredChunk } from '../src/modules/retrieval/retrieval.repo.js'
import type { VectorIndexSpec } from '../src/modules/retrieval/vector-index.fns.js'

type Search = (tenantId: string, q: number[], model: string, k: number, index?: { spec: VectorIndexSpec; efSearch: number }) => Promise<ScoredChunk[]>

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}
const r1 = (x: number) => Math.round(x * 10) / 10

export async function recallSweep(o: {
  label: string
  search: Search
  tenantId: string
  model: string
  spec: VectorIndexSpec
  pages: { ids: string[]; vecs: number[][] }
  questions: number
  efs: number[]
  question: (page: number[]) => number[]
  serverCpuMs: () => Promise<number | null>
  load: () => string
}): Promise<{ ef: number; recall: number; tolerant: number; found6: number; found40: number; p95: number; server: number }[]> {
  if (o.questions <= 0) return []
  const qs: { v: number[]; page: string; truth: Set<string>; border: number }[] = []
  const e0 = performance.now()
  for (let i = 0; i < o.questions; i++) {
    const p = i % o.pages.vecs.length
    const v = o.question(o.pages.vecs[p]!)
    const exact = await o.search(o.tenantId, v, o.model, 40)
    qs.push({ v, page: o.pages.ids[p]!, truth: new Set(exact.map((r) => r.id)), border: 1 - exact[exact.length - 1]!.score })
  }
  console.log(`  ${o.label}: the exact top 40 of ${o.questions} questions in ${r1((performance.now() - e0) / 1000)} s, load ${o.load()}`)
  const out = []
  for (const ef of o.efs) {
    // a first pass unmeasured (pages of the graph into shared buffers, as on a server that has been answering), then the measured one
    for (const q of qs) await o.search(o.tenantId, q.v, o.model, 40, { spec: o.spec, efSearch: ef })
    let hit = 0
    let tolerant = 0
    let all = 0
    let found6 = 0
    let found40 = 0
    let server = 0
    const times: number[] = []
    for (const q of qs) {
      const s0 = await o.serverCpuMs()
      const t0 = performance.now()
      const got = await o.search(o.tenantId, q.v, o.model, 40, { spec: o.spec, efSearch: ef })
      times.push(performance.now() - t0)
      const s1 = await o.serverCpuMs()
      if (s0 !== null && s1 !== null) server += s1 - s0
      hit += got.filter((r) => q.truth.has(r.id)).length
      tolerant += got.filter((r) => 1 - r.score <= q.border * (1 + 1e-3)).length
      all += q.truth.size
      const rank = got.findIndex((r) => r.id === q.page)
      if (rank >= 0 && rank < 6) found6++
      if (rank >= 0) found40++
    }
    const r = {
      ef,
      recall: hit / all,
      tolerant: Math.min(1, tolerant / all),
      found6,
      found40,
      p50: pct(times, 50),
      p95: pct(times, 95),
      server: server / qs.length,
    }
    console.log(
      `  ${o.label}, ef_search ${ef}: recall@40 ${r.recall.toFixed(3)}, with distance tolerance ${r.tolerant.toFixed(3)}, page in the vector top 6 ${found6}/${qs.length}, top 40 ${found40}/${qs.length}; index statement p50 ${r1(r.p50)} / p95 ${r1(r.p95)} ms, PostgreSQL CPU ${r1(r.server)} ms a search, load ${o.load()}`,
    )
    out.push(r)
  }
  return out
}
