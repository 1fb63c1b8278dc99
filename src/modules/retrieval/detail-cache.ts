import { BudgetLru } from './budget-lru.js'
import type { ChunkDetail } from './retrieval.repo.js'

interface Entry {
  version: number
  detail: ChunkDetail
  bytes: number
}

/** Rough size of an entry: the strings (2 bytes a character) and the map's own overhead. */
const sizeOf = (d: ChunkDetail): number =>
  200 +
  2 *
    (d.content.length +
      (d.section_title?.length ?? 0) +
      (d.heading_path?.length ?? 0) +
      (d.source_url?.length ?? 0) +
      (d.doc_title?.length ?? 0) +
      d.filename.length +
      (d.doc_url?.length ?? 0))

/**
 * The text and document fields of chunks a turn cited or weighed, kept per tenant and corpus version: popular
 * chunks come back turn after turn, so most turns read none. Every write to a tenant's chunks bumps its corpus
 * version (lexical_corpus), and an entry of another version is a miss, so a re-indexed or deleted document is
 * never served from here; a document's title changes only with a re-index (crawl.ts), which bumps the version too.
 * A budget of 0 keeps nothing.
 */
export class ChunkDetailCache {
  private readonly lru: BudgetLru<Entry>

  constructor(maxBytes: number) {
    this.lru = new BudgetLru<Entry>(Math.max(0, maxBytes))
  }

  /** The cached details of `ids` at `version`, and the ids still to read. */
  take(tenantId: string, version: number, ids: string[]): { found: ChunkDetail[]; missing: string[] } {
    const found: ChunkDetail[] = []
    const missing: string[] = []
    for (const id of ids) {
      const e = this.lru.maxBytes > 0 ? this.lru.get(`${tenantId}:${id}`) : undefined
      if (e && e.version === version) found.push(e.detail)
      else missing.push(id)
    }
    return { found, missing }
  }

  /** Keeps details read at `version` (read after the version was: a later write bumps it past them). */
  put(tenantId: string, version: number, details: ChunkDetail[]): void {
    if (this.lru.maxBytes <= 0) return
    for (const d of details) {
      const bytes = sizeOf(d)
      if (bytes <= this.lru.maxBytes / 4) this.lru.set(`${tenantId}:${d.id}`, { version, detail: d, bytes })
    }
  }
}
