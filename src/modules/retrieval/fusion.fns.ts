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
 * Every pair's word overlap (jaccard of the items' `terms`) at once, exactly as `jaccard` gives it: each word of the
 * pool is numbered through one open-addressing table, and every word two items share adds one to that pair. The
 * pairwise merge it replaces took most of MMR's time (bench:chat's profile: 190 merges of ~250 words a turn, the
 * branches a coin toss on random hashes); this is one pass over the words plus one add per sharing pair.
 */
export function overlapMatrix(terms: Uint32Array[]): (i: number, j: number) => number {
  const n = terms.length
  let total = 0
  for (const t of terms) total += t.length
  let size = 64
  while (size < total * 2) size *= 2
  const mask = size - 1
  const keys = new Uint32Array(size)
  const slot = new Int32Array(size).fill(-1)
  const word = new Int32Array(total) // the pool's number of each occurrence, item after item
  const df = new Int32Array(total + 1)
  let distinct = 0
  let at = 0
  for (const t of terms) {
    for (let w = 0; w < t.length; w++) {
      const h = t[w]!
      let p = Math.imul(h, 0x9e3779b1) & mask
      while (slot[p] !== -1 && keys[p] !== h) p = (p + 1) & mask
      if (slot[p] === -1) {
        keys[p] = h
        slot[p] = distinct++
      }
      const u = slot[p]!
      word[at++] = u
      df[u]!++
    }
  }
  // the items holding each word, in item order (a counting sort of the occurrences)
  const begin = new Int32Array(distinct + 1)
  for (let u = 0; u < distinct; u++) begin[u + 1] = begin[u]! + df[u]!
  const fill = begin.slice(0, distinct)
  const holders = new Int32Array(total)
  at = 0
  for (let i = 0; i < n; i++) for (let w = 0; w < terms[i]!.length; w++) holders[fill[word[at++]!]!++] = i
  const shared = new Int32Array(n * n)
  for (let u = 0; u < distinct; u++) {
    const b = begin[u]!
    const e = begin[u + 1]!
    for (let x = b; x < e; x++) {
      const row = holders[x]! * n
      for (let y = x + 1; y < e; y++) shared[row + holders[y]!]!++
    }
  }
  return (i, j) => {
    const a = terms[i]!.length
    const b = terms[j]!.length
    if (a === 0 && b === 0) return 0
    const inter = i < j ? shared[i * n + j]! : shared[j * n + i]!
    return inter / (a + b - inter)
  }
}

/**
 * Greedy MMR: each pick maximises lambda * relevance - (1 - lambda) * (max similarity to the picks so far).
 * Items nearly identical to a pick (similarity >= dupThreshold) are dropped outright. Similarity as `similarity`
 * gives it: the embeddings' cosine where both have one of a width, else the word overlap (from overlapMatrix).
 */
export function mmr<T extends MmrItem>(items: T[], k: number, lambda = 0.7, dupThreshold = 0.95): T[] {
  const n = items.length
  if (n === 0 || k <= 0) return []
  let max = -Infinity
  for (const it of items) if (it.relevance > max) max = it.relevance
  const overlap = overlapMatrix(items.map((it) => it.terms))
  const sim = (i: number, j: number) => {
    const a = items[i]!.embedding
    const b = items[j]!.embedding
    return a && b && a.length === b.length ? cosine(a, b) : overlap(i, j)
  }
  // per position: the highest similarity to a pick so far, and whether still a candidate
  const maxSim = new Float64Array(n)
  const alive = new Uint8Array(n).fill(1)
  let left = n
  const picked: T[] = []
  while (picked.length < k && left > 0) {
    let best = -1
    let bestScore = -Infinity
    for (let i = 0; i < n; i++) {
      if (!alive[i]) continue
      const s = lambda * (max > 0 ? items[i]!.relevance / max : 0) - (1 - lambda) * maxSim[i]!
      if (s > bestScore) {
        bestScore = s
        best = i
      }
    }
    picked.push(items[best]!)
    alive[best] = 0
    left--
    for (let i = 0; i < n; i++) {
      if (!alive[i]) continue
      const s = sim(i, best)
      if (s >= dupThreshold) {
        alive[i] = 0
        left--
      } else if (s > maxSim[i]!) maxSim[i] = s
    }
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
