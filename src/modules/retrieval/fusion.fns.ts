/**
 * Rank fusion and diversification. Lists from different retrievers (BM25, vectors, FAQ) have scores on
 * different scales, so Reciprocal Rank Fusion combines ranks only; Maximal Marginal Relevance then picks
 * the final top-k so near-duplicate chunks do not crowd out other evidence.
 */

export interface Ranked {
  id: string
}

/** RRF: sum over lists of weight / (k + rank), rank starting at 1. Cormack et al. use k = 60. */
export function rrf(lists: { items: Ranked[]; weight?: number }[], k = 60): Map<string, number> {
  const scores = new Map<string, number>()
  for (const list of lists) {
    const w = list.weight ?? 1
    list.items.forEach((item, i) => {
      scores.set(item.id, (scores.get(item.id) ?? 0) + w / (k + i + 1))
    })
  }
  return scores
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length)
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < n; i++) {
    const x = a[i]!
    const y = b[i]!
    dot += x * y
    na += x * x
    nb += y * y
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0
}

/** Jaccard overlap of two word sets given as sorted distinct hashes (see wordHashes). */
export function jaccard(a: Uint32Array, b: Uint32Array): number {
  if (a.length === 0 && b.length === 0) return 0
  let inter = 0
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const x = a[i]!
    const y = b[j]!
    if (x === y) {
      inter++
      i++
      j++
    } else if (x < y) i++
    else j++
  }
  return inter / (a.length + b.length - inter)
}

export interface MmrItem {
  id: string
  /** Relevance, any scale (normalised inside). */
  relevance: number
  embedding?: ArrayLike<number> | null
  /** The text's words as sorted distinct hashes (wordHashes). */
  terms: Uint32Array
}

/** Similarity of two candidates: cosine of their embeddings when both have one, else word overlap. */
export function similarity(a: MmrItem, b: MmrItem): number {
  if (a.embedding && b.embedding && a.embedding.length === b.embedding.length) return cosine(a.embedding, b.embedding)
  return jaccard(a.terms, b.terms)
}

/**
 * Greedy MMR: each pick maximises lambda * relevance - (1 - lambda) * (max similarity to the picks so far).
 * Items nearly identical to a pick (similarity >= dupThreshold) are dropped outright.
 */
export function mmr<T extends MmrItem>(items: T[], k: number, lambda = 0.7, dupThreshold = 0.95): T[] {
  if (items.length === 0 || k <= 0) return []
  const max = Math.max(...items.map((i) => i.relevance))
  const rel = (i: T) => (max > 0 ? i.relevance / max : 0)
  const picked: T[] = []
  const maxSim = new Map<string, number>()
  let rest = [...items]
  while (picked.length < k && rest.length > 0) {
    let best: T | null = null
    let bestScore = -Infinity
    for (const it of rest) {
      const s = lambda * rel(it) - (1 - lambda) * (maxSim.get(it.id) ?? 0)
      if (s > bestScore) {
        bestScore = s
        best = it
      }
    }
    const chosen = best!
    picked.push(chosen)
    rest = rest.filter((it) => it !== chosen)
    const next: T[] = []
    for (const it of rest) {
      const sim = similarity(it, chosen)
      if (sim >= dupThreshold) continue
      maxSim.set(it.id, Math.max(maxSim.get(it.id) ?? 0, sim))
      next.push(it)
    }
    rest = next
  }
  return picked
}

/**
 * The lower-cased words of a text (2+ letters or digits, the first 2,000) as sorted distinct 32-bit FNV-1a
 * hashes: overlap similarity then merges two typed arrays instead of building and probing string sets, and a
 * cached entry costs 4 bytes a word. A collision (about one in 2^32 per pair of words) only nudges a score.
 */
export function wordHashes(text: string): Uint32Array {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? []
  const n = Math.min(words.length, 2000)
  const out = new Uint32Array(n)
  for (let w = 0; w < n; w++) {
    const word = words[w]!
    let h = 0x811c9dc5
    for (let i = 0; i < word.length; i++) {
      h ^= word.charCodeAt(i)
      h = Math.imul(h, 0x01000193)
    }
    out[w] = h >>> 0
  }
  out.sort()
  let k = 0
  for (let i = 0; i < n; i++) if (i === 0 || out[i] !== out[i - 1]) out[k++] = out[i]!
  return out.slice(0, k)
}

/** The first `k` hits with at most `cap` chunks of one document; the others fill in only when nothing else is left. */
export function capPerDocument<T extends { documentId: string | null }>(hits: T[], k: number, cap: number): T[] {
  const out: T[] = []
  const over: T[] = []
  const perDoc = new Map<string, number>()
  for (const h of hits) {
    if (out.length >= k) break
    const n = h.documentId ? (perDoc.get(h.documentId) ?? 0) : 0
    if (h.documentId && n >= cap) {
      over.push(h)
      continue
    }
    if (h.documentId) perDoc.set(h.documentId, n + 1)
    out.push(h)
  }
  for (const h of over) if (out.length < k) out.push(h)
  return out
}
