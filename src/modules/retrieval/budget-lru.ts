/**
 * Per-tenant entries within a memory budget, least recently used evicted first: the storage of the
 * in-process retrieval caches (vectors, BM25 postings). `bytes` is the entry's own estimate of its size.
 */
export class BudgetLru<V extends { bytes: number }> {
  private readonly entries = new Map<string, V>()
  private used = 0

  constructor(readonly maxBytes: number) {}

  /** The entry, marked as just used. */
  get(key: string): V | undefined {
    const v = this.entries.get(key)
    if (v) {
      this.entries.delete(key)
      this.entries.set(key, v)
    }
    return v
  }

  /** Stores the entry in place of the key's old one, evicting the least recently used until it fits. */
  set(key: string, value: V): void {
    const old = this.entries.get(key)
    if (old) {
      this.used -= old.bytes
      this.entries.delete(key)
    }
    for (const [k, e] of this.entries) {
      if (this.used + value.bytes <= this.maxBytes) break
      this.entries.delete(k)
      this.used -= e.bytes
    }
    this.entries.set(key, value)
    this.used += value.bytes
  }
}
