import { BudgetLru } from './budget-lru.js'
import { DotMatrix, matrixRowBytes } from './simd-dot.js'

/**
 * Exact cosine search in process, for databases without pgvector: a tenant's embeddings are loaded once
 * (normalised, Float32) and reused until the tenant's corpus version changes. Memory is bounded; a tenant
 * too large for the budget gets null, and the caller falls back to scoring candidate rows only.
 */
export interface VectorEntry {
  version: number
  model: string
  dims: number
  ids: string[]
  docIds: string[]
  /** Rows of `dims` floats, for the JavaScript loop; empty when `matrix` holds them. */
  data: Float32Array
  /** The same rows in WebAssembly memory, scored with SIMD (null where WebAssembly SIMD is missing). */
  matrix: DotMatrix | null
  bytes: number
}

export type VectorLoader = () => AsyncIterable<{ id: string; document_id: string; embedding: number[] }[]>

export function normalize(v: ArrayLike<number>): Float32Array {
  let n = 0
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!
  const out = new Float32Array(v.length)
  const inv = n > 0 ? 1 / Math.sqrt(n) : 0
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * inv
  return out
}

/** The dot product of `query` with every row of `data` (rows of `dims` floats), in JavaScript. */
function dotAll(data: Float32Array, dims: number, rows: number, query: Float32Array): Float32Array {
  const out = new Float32Array(rows)
  const tail = dims - (dims % 4)
  for (let r = 0; r < rows; r++) {
    // four independent sums: the CPU overlaps them (about twice as fast as one running sum)
    let s0 = 0
    let s1 = 0
    let s2 = 0
    let s3 = 0
    const off = r * dims
    let d = 0
    for (; d < tail; d += 4) {
      s0 += data[off + d]! * query[d]!
      s1 += data[off + d + 1]! * query[d + 1]!
      s2 += data[off + d + 2]! * query[d + 2]!
      s3 += data[off + d + 3]! * query[d + 3]!
    }
    for (; d < dims; d++) s0 += data[off + d]! * query[d]!
    out[r] = s0 + s1 + s2 + s3
  }
  return out
}

/** The best rows among `scores` by a small min-heap (O(n log k)), best first. */
function best(scores: ArrayLike<number>, k: number): { index: number; score: number }[] {
  const heapIdx: number[] = []
  const heapVal: number[] = []
  const siftDown = (i: number) => {
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < heapVal.length && heapVal[l]! < heapVal[m]!) m = l
      if (r < heapVal.length && heapVal[r]! < heapVal[m]!) m = r
      if (m === i) return
      ;[heapVal[i], heapVal[m]] = [heapVal[m]!, heapVal[i]!]
      ;[heapIdx[i], heapIdx[m]] = [heapIdx[m]!, heapIdx[i]!]
      i = m
    }
  }
  const siftUp = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1
      if (heapVal[p]! <= heapVal[i]!) return
      ;[heapVal[i], heapVal[p]] = [heapVal[p]!, heapVal[i]!]
      ;[heapIdx[i], heapIdx[p]] = [heapIdx[p]!, heapIdx[i]!]
      i = p
    }
  }
  for (let r = 0; r < scores.length; r++) {
    const dot = scores[r]!
    if (heapVal.length < k) {
      heapVal.push(dot)
      heapIdx.push(r)
      siftUp(heapVal.length - 1)
    } else if (dot > heapVal[0]!) {
      heapVal[0] = dot
      heapIdx[0] = r
      siftDown(0)
    }
  }
  return heapIdx.map((index, i) => ({ index, score: heapVal[i]! })).sort((a, b) => b.score - a.score)
}

/**
 * The rows the 8-bit scan hands to the exact one for k hits: the best max(2k, k + 32) by it, and every other row
 * within the matrix's margin of its k-th best (DotMatrix.margin: twelve standard deviations of the rounding
 * error), so a true hit does not fall out of the shortlist.
 */
function shortlist(approx: Float32Array, k: number, margin: number): number[] {
  const rough = best(approx, Math.max(2 * k, k + 32))
  if (rough.length <= k) return rough.map((r) => r.index)
  const floor = rough[k - 1]!.score - margin
  if (rough[rough.length - 1]!.score < floor) return rough.map((r) => r.index)
  const all: number[] = []
  for (let r = 0; r < approx.length; r++) if (approx[r]! >= floor) all.push(r)
  return all
}

/**
 * Indices and similarities of the k best rows: with the entry's WebAssembly matrix, the shortlist of its 8-bit
 * scan (simd-dot.ts) scored exactly, so hits and scores are the exact scan's; with the JavaScript loop otherwise.
 */
export function topK(
  entry: Pick<VectorEntry, 'data' | 'dims' | 'ids'> & { matrix?: DotMatrix | null },
  query: Float32Array,
  k: number,
): { index: number; score: number }[] {
  const m = entry.matrix
  if (!m) return best(dotAll(entry.data, entry.dims, entry.ids.length, query), k)
  const rows = shortlist(m.approx(query), k, m.margin())
  return best(
    rows.map((r) => m.exact(r)),
    k,
  ).map((x) => ({ index: rows[x.index]!, score: x.score }))
}

export class VectorCache {
  private entries: BudgetLru<VectorEntry>
  private loading = new Map<string, Promise<VectorEntry | null>>()

  constructor(private readonly maxBytes: number) {
    this.entries = new BudgetLru(maxBytes)
  }

  /**
   * The tenant's vectors at `version`, loading them when missing or stale. Null when they would not fit
   * the budget (`expectedRows * matrixRowBytes(dims)`, about five bytes a dimension), or when there are none.
   */
  async get(tenantId: string, version: number, model: string, dims: number, expectedRows: number, load: VectorLoader): Promise<VectorEntry | null> {
    const cur = this.entries.get(tenantId)
    if (cur && cur.version === version && cur.model === model && cur.dims === dims) return cur
    if (expectedRows <= 0 || expectedRows * matrixRowBytes(dims) > this.maxBytes) return null
    const key = `${tenantId}:${version}:${model}:${dims}`
    let p = this.loading.get(key)
    if (!p) {
      p = this.load(tenantId, version, model, dims, expectedRows, load).finally(() => this.loading.delete(key))
      this.loading.set(key, p)
    }
    return p
  }

  private async load(tenantId: string, version: number, model: string, dims: number, expectedRows: number, load: VectorLoader): Promise<VectorEntry | null> {
    let data = new Float32Array(Math.max(expectedRows, 1) * dims)
    const ids: string[] = []
    const docIds: string[] = []
    for await (const page of load()) {
      for (const row of page) {
        if (row.embedding.length !== dims) continue
        if ((ids.length + 1) * dims > data.length) {
          if ((ids.length + 1) * matrixRowBytes(dims) > this.maxBytes) return null
          const bigger = new Float32Array(Math.min(data.length * 2, Math.floor(this.maxBytes / 4 / dims) * dims))
          bigger.set(data)
          data = bigger
        }
        data.set(normalize(row.embedding), ids.length * dims)
        ids.push(row.id)
        docIds.push(row.document_id)
      }
    }
    if (ids.length === 0) return null
    const rowsData = data.length === ids.length * dims ? data : data.slice(0, ids.length * dims)
    const matrix = DotMatrix.from(rowsData, dims)
    const entry: VectorEntry = {
      version,
      model,
      dims,
      ids,
      docIds,
      data: matrix ? new Float32Array(0) : rowsData,
      matrix,
      bytes: matrix ? matrix.bytes : ids.length * dims * 4,
    }
    this.entries.set(tenantId, entry)
    return entry
  }
}
