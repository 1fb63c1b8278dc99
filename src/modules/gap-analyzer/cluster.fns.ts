import { setCosine, termKey, terms } from '../knowledge/text.fns.js'

/**
 * Clustering of visitor questions for mode B, pure and incremental ("leader" clustering): questions with
 * the same content terms are grouped first, groups are weighted by tf-idf, and each group (largest first)
 * joins the most similar existing cluster or starts a new one. Candidates come from an inverted index
 * (rarest terms first), so a run is roughly linear in the number of questions. Dense vectors (embeddings)
 * widen the match to paraphrases that share few words. The work yields to the event loop every few
 * hundred groups so chat traffic on the same process is not held up.
 */

export interface QuestionLike {
  question: string
  outcome: string
  feedback: string
}

/** How much one logged question says "the knowledge failed here": escalations and thumbs-down weigh more. */
export function questionSignal(q: Pick<QuestionLike, 'outcome' | 'feedback'>): number {
  let w = 1
  if (q.outcome === 'escalated') w += 2
  else if (q.outcome === 'refused' || q.outcome === 'caveat') w += 0.5
  if (q.feedback === 'down') w += 2
  else if (q.feedback === 'up') w *= 0.5
  return w
}

export interface Group {
  key: string
  /** Indices of the questions in the group. */
  members: number[]
  /** The group's most frequent wording. */
  text: string
  tf: Map<string, number>
}

/** Questions with the same distinct content terms form one group (an empty key is dropped). */
export async function groupQuestions(questions: string[], sliceMs = 8): Promise<Group[]> {
  const yielder = createYielder(sliceMs)
  const byKey = new Map<string, { members: number[]; texts: Map<string, number> }>()
  for (let i = 0; i < questions.length; i++) {
    if (i % 64 === 0) await yielder.tick()
    const key = termKey(questions[i]!)
    if (!key) continue
    let g = byKey.get(key)
    if (!g) {
      g = { members: [], texts: new Map() }
      byKey.set(key, g)
    }
    g.members.push(i)
    const t = questions[i]!.replace(/\s+/g, ' ').trim()
    g.texts.set(t, (g.texts.get(t) ?? 0) + 1)
  }
  const out: Group[] = []
  for (const [key, g] of byKey) {
    const text = [...g.texts.entries()].sort((a, b) => b[1] - a[1] || a[0].length - b[0].length)[0]![0]
    const tf = new Map<string, number>()
    for (const t of terms(text)) tf.set(t, (tf.get(t) ?? 0) + 1)
    if (tf.size === 0) for (const t of key.split(' ')) tf.set(t, 1)
    out.push({ key, members: g.members, text, tf })
  }
  return out
}

/** Unit tf-idf vectors of the groups; idf counts each question (a group of 10 counts 10 times). */
export function tfidf(groups: Group[]): { vectors: Map<string, number>[]; idf: Map<string, number> } {
  const df = new Map<string, number>()
  let n = 0
  for (const g of groups) {
    n += g.members.length
    for (const t of g.tf.keys()) df.set(t, (df.get(t) ?? 0) + g.members.length)
  }
  const idf = new Map<string, number>()
  for (const [t, d] of df) idf.set(t, Math.log(1 + n / d))
  const vectors = groups.map((g) => {
    const v = new Map<string, number>()
    let norm = 0
    for (const [t, f] of g.tf) {
      const w = (1 + Math.log(f)) * idf.get(t)!
      v.set(t, w)
      norm += w * w
    }
    const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0
    for (const [t, w] of v) v.set(t, w * inv)
    return v
  })
  return { vectors, idf }
}

export interface ClusterOptions {
  /** Lexical cosine (tf-idf) at or above which a group joins a cluster. */
  lexicalThreshold: number
  /** Dense cosine (normalised embeddings) at or above which a group joins a cluster. */
  denseThreshold: number
  /** Candidate clusters looked at per group (from the inverted index). */
  maxCandidates?: number
  /** With dense vectors, the largest clusters are always compared too (paraphrases sharing no word). */
  alwaysCompareLargest?: number
  /** Yield to the event loop after this much work (ms). */
  sliceMs?: number
  signal?: AbortSignal
}

interface WorkCluster {
  groups: number[]
  weight: number
  centroid: Map<string, number>
  norm2: number
  dense: Float32Array | null
  denseNorm2: number
}

const yieldNow = () => new Promise<void>((r) => setImmediate(r))

/**
 * Cooperative slicing of CPU work: `tick()` yields to the event loop once `budgetMs` of work has run
 * since the last yield, so HTTP requests on the same process wait at most about that long.
 */
export function createYielder(budgetMs = 8, signal?: AbortSignal) {
  let last = performance.now()
  return {
    async tick(): Promise<void> {
      if (performance.now() - last < budgetMs) return
      await yieldNow()
      if (signal?.aborted) throw new Error('aborted')
      last = performance.now()
    },
  }
}

/**
 * Clusters groups (with their question counts as weights and optional unit dense vectors). Returns the
 * group indices of each cluster, largest clusters first.
 */
export async function clusterGroups(
  vectors: Map<string, number>[],
  weights: number[],
  dense: (Float32Array | null)[] | null,
  idf: Map<string, number>,
  opts: ClusterOptions,
): Promise<number[][]> {
  const maxCandidates = opts.maxCandidates ?? 200
  const alwaysLargest = dense ? (opts.alwaysCompareLargest ?? 32) : 0
  const yielder = createYielder(opts.sliceMs ?? 8, opts.signal)
  const order = vectors.map((_, i) => i).sort((a, b) => weights[b]! - weights[a]! || a - b)
  const clusters: WorkCluster[] = []
  const index = new Map<string, number[]>()
  let largest: number[] = []

  for (let step = 0; step < order.length; step++) {
    await yielder.tick()
    if (alwaysLargest && (step % 64 === 0 || clusters.length <= alwaysLargest)) {
      largest = clusters
        .map((c, i) => ({ i, w: c.weight }))
        .sort((a, b) => b.w - a.w)
        .slice(0, alwaysLargest)
        .map((x) => x.i)
    }
    const gi = order[step]!
    const v = vectors[gi]!
    const d = dense?.[gi] ?? null
    const candidates = new Set<number>(largest)
    const byRarity = [...v.keys()].sort((a, b) => (idf.get(b) ?? 0) - (idf.get(a) ?? 0))
    for (const t of byRarity) {
      for (const c of index.get(t) ?? []) {
        candidates.add(c)
        if (candidates.size >= maxCandidates + largest.length) break
      }
      if (candidates.size >= maxCandidates + largest.length) break
    }
    let best = -1
    let bestScore = 0
    for (const ci of candidates) {
      const c = clusters[ci]!
      let dotv = 0
      for (const [t, w] of v) {
        const cw = c.centroid.get(t)
        if (cw !== undefined) dotv += w * cw
      }
      const lex = c.norm2 > 0 ? dotv / Math.sqrt(c.norm2) : 0
      let den = 0
      if (d && c.dense && c.denseNorm2 > 0) {
        let s = 0
        for (let k = 0; k < d.length; k++) s += d[k]! * c.dense[k]!
        den = s / Math.sqrt(c.denseNorm2)
      }
      const score = Math.max(lex / opts.lexicalThreshold, d ? den / opts.denseThreshold : 0)
      if (score >= 1 && score > bestScore) {
        bestScore = score
        best = ci
      }
    }
    const w = weights[gi]!
    if (best < 0) {
      best = clusters.length
      clusters.push({ groups: [], weight: 0, centroid: new Map(), norm2: 0, dense: d ? new Float32Array(d.length) : null, denseNorm2: 0 })
    }
    const c = clusters[best]!
    // |c + w v|^2 = |c|^2 + 2w (c . v) + w^2 |v|^2, with |v| = 1
    let cv = 0
    for (const [t, x] of v) {
      const cw = c.centroid.get(t)
      if (cw !== undefined) cv += x * cw
      else {
        const l = index.get(t)
        if (l) l.push(best)
        else index.set(t, [best])
      }
      c.centroid.set(t, (cw ?? 0) + w * x)
    }
    c.norm2 += 2 * w * cv + w * w
    if (d && c.dense) {
      let s = 0
      for (let k = 0; k < d.length; k++) {
        s += c.dense[k]! * d[k]!
        c.dense[k]! += w * d[k]!
      }
      c.denseNorm2 += 2 * w * s + w * w
    }
    c.groups.push(gi)
    c.weight += w
  }
  return clusters.sort((a, b) => b.weight - a.weight).map((c) => c.groups)
}

/** The top terms of a cluster (summed group vectors weighted by size), normalised to a max of 1. */
export function clusterTerms(groupIdx: number[], vectors: Map<string, number>[], weights: number[], top = 12): Record<string, number> {
  const sum = new Map<string, number>()
  for (const g of groupIdx) for (const [t, w] of vectors[g]!) sum.set(t, (sum.get(t) ?? 0) + w * weights[g]!)
  const sorted = [...sum.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, top)
  const max = sorted[0]?.[1] ?? 1
  return Object.fromEntries(sorted.map(([t, w]) => [t, Math.round((w / max) * 1000) / 1000]))
}

/** A stable key of a cluster: its three strongest terms, sorted. */
export function clusterKey(t: Record<string, number>): string {
  return Object.keys(t).slice(0, 3).sort().join(' ')
}

/** Cosine of two term-weight maps. */
export function termsCosine(a: Record<string, number>, b: Record<string, number>): number {
  let dotv = 0
  let na = 0
  let nb = 0
  for (const [t, w] of Object.entries(a)) {
    na += w * w
    const o = b[t]
    if (o !== undefined) dotv += w * o
  }
  for (const w of Object.values(b)) nb += w * w
  return na > 0 && nb > 0 ? dotv / Math.sqrt(na * nb) : 0
}

/**
 * Pairs this run's items with the stored gaps of the previous runs: the same key first, then the most
 * similar terms (at least `threshold`); each stored gap is used once. Returns item index -> stored id.
 */
export function matchExisting(
  items: { key: string; terms: Record<string, number> }[],
  stored: { id: string; key: string; terms: Record<string, number> }[],
  threshold = 0.5,
): Map<number, string> {
  const out = new Map<number, string>()
  const used = new Set<string>()
  const byKey = new Map(stored.map((s) => [s.key, s]))
  items.forEach((it, i) => {
    const s = byKey.get(it.key)
    if (s && !used.has(s.id)) {
      out.set(i, s.id)
      used.add(s.id)
    }
  })
  const pairs: { i: number; id: string; sim: number }[] = []
  items.forEach((it, i) => {
    if (out.has(i)) return
    for (const s of stored) {
      if (used.has(s.id)) continue
      const sim = termsCosine(it.terms, s.terms)
      if (sim >= threshold) pairs.push({ i, id: s.id, sim })
    }
  })
  pairs.sort((a, b) => b.sim - a.sim)
  for (const p of pairs) {
    if (out.has(p.i) || used.has(p.id)) continue
    out.set(p.i, p.id)
    used.add(p.id)
  }
  return out
}

export type Classification = 'uncovered' | 'partial' | 'covered'

export function classify(coverage: number, partialAt: number, coveredAt: number): Classification {
  return coverage >= coveredAt ? 'covered' : coverage >= partialAt ? 'partial' : 'uncovered'
}

/**
 * Mode B coverage: how well retrieval covers the cluster's question now, discounted by how the answers
 * went (escalations, refusals and thumbs-down pull it down).
 */
export function clusterCoverage(retrieval: number, outcomes: Pick<QuestionLike, 'outcome' | 'feedback'>[]): number {
  if (outcomes.length === 0) return round(retrieval)
  let good = 0
  for (const o of outcomes) {
    if (o.feedback === 'down') continue
    if (o.outcome === 'answered') good += 1
    else if (o.outcome === 'caveat') good += 0.5
  }
  return round(Math.max(0, Math.min(1, retrieval)) * (0.5 + (0.5 * good) / outcomes.length))
}

export const round = (x: number, places = 4) => Math.round(x * 10 ** places) / 10 ** places

/** Whether a visitor cluster is about a documentation topic: the topic's terms are (mostly) among the cluster's. */
export function topicMatches(topicLabel: string, cluster: Record<string, number>): number {
  const t = new Set(terms(topicLabel))
  if (t.size === 0) return 0
  const c = new Set(Object.keys(cluster))
  let inside = 0
  for (const x of t) if (c.has(x)) inside++
  const containment = inside / t.size
  return Math.max(setCosine(t, c), containment >= 1 ? 0.75 : containment * 0.6)
}
