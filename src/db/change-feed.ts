import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Db } from './client.js'
import { setBounded } from '../lib/bounded.js'

/** The PostgreSQL channel every instance listens on. */
export const CHANGES_CHANNEL = 'scb_changes'

/** How long a local announcement keeps its key uncached when its notice never comes back (a rollback). */
const PENDING_MS = 10_000

/**
 * Change notices between the instances that share one database, over LISTEN/NOTIFY.
 *
 * A write announces `topic` + `key` inside its transaction; PostgreSQL delivers the notice to every listening
 * instance when (and only if) the transaction commits. Caches built on it (`NoticeCache`) therefore see another
 * instance's change within milliseconds, and the writing instance sees its own change at once: from the
 * announcement until its notice comes back, the key is not served from cache at all.
 */
export interface ChangeFeed {
  /** False while notices may be missed (listener connection down): caches keep nothing then. */
  readonly live: boolean
  /**
   * Call right after the write, on the same executor: inside a transaction the notice goes out at commit; in
   * autocommit it goes out after the write's own commit. Until it comes back, this instance serves the key
   * from the database.
   */
  announce(trx: Db, topic: string, key: string): Promise<void>
  /**
   * announce's bookkeeping without its statement, for a write that sends the notice itself: returns the payload, which
   * the caller passes to `pg_notify(CHANGES_CHANNEL, payload)` in its very next statement on the same executor.
   */
  notice(topic: string, key: string): string
  /** True when this instance has no announcement of `topic`/`key` still waiting for its notice. */
  settled(topic: string, key: string): boolean
  /** Called for every local announcement and every notice of `topic` (possibly twice for one change). */
  subscribe(topic: string, fn: (key: string) => void): void
  /** Called when notices may have been missed: drop everything. */
  onReset(fn: () => void): void
}

/** How the database driver delivers notices: `start` begins listening and reports each payload and each loss. */
export interface NoticeSource {
  start(onPayload: (payload: string) => void, onLive: (live: boolean) => void): Promise<void>
}

export function createChangeFeed(source: NoticeSource | null): ChangeFeed & { start(): Promise<void> } {
  const subscribers = new Map<string, ((key: string) => void)[]>()
  const resets: (() => void)[] = []
  // topic\0key -> nonces announced here whose notices have not come back yet, with their expiry
  const pending = new Map<string, Map<string, number>>()
  let live = false

  const fire = (topic: string, key: string) => {
    for (const fn of subscribers.get(topic) ?? []) fn(key)
  }
  const reset = () => {
    pending.clear()
    for (const fn of resets) fn()
  }

  function onPayload(payload: string): void {
    // topic \x1f key \x1f nonce
    const [topic, key, nonce] = payload.split('\x1f')
    if (!topic || key === undefined) return
    const slot = `${topic}\0${key}`
    const mine = pending.get(slot)
    if (mine && nonce) {
      mine.delete(nonce)
      if (mine.size === 0) pending.delete(slot)
    }
    fire(topic, key)
  }

  return {
    get live() {
      return live
    },
    async start() {
      if (!source) return
      await source.start(onPayload, (now) => {
        if (live !== now) reset()
        live = now
      })
    },
    async announce(trx, topic, key) {
      await sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${this.notice(topic, key)})`.execute(trx)
    },
    notice(topic, key) {
      const nonce = randomUUID()
      const slot = `${topic}\0${key}`
      let mine = pending.get(slot)
      if (!mine) pending.set(slot, (mine = new Map()))
      mine.set(nonce, performance.now() + PENDING_MS)
      fire(topic, key)
      return `${topic}\x1f${key}\x1f${nonce}`
    },
    settled(topic, key) {
      const mine = pending.get(`${topic}\0${key}`)
      if (!mine) return true
      const now = performance.now()
      for (const [nonce, until] of mine) if (until <= now) mine.delete(nonce)
      if (mine.size > 0) return false
      pending.delete(`${topic}\0${key}`)
      return true
    },
    subscribe(topic, fn) {
      const list = subscribers.get(topic) ?? []
      list.push(fn)
      subscribers.set(topic, list)
    },
    onReset(fn) {
      resets.push(fn)
    },
  }
}

/**
 * Read-through cache of small, hot, rarely written rows (a tenant's bots, a user's auth row), kept coherent by
 * the change feed: an entry lives until a notice for its key (or `ttlMs`, a safety bound), a read that raced a
 * change is not kept, nothing is kept while the feed is not live, and `undefined` (not found) is never kept,
 * nor is a value `keep` refuses (too large to hold).
 */
/**
 * Who hears about each NoticeCache lookup of a feed (the metrics' hit rates). Kept beside the feed instead
 * of on it, so the feed's implementations need not know about metrics.
 */
const cacheObservers = new WeakMap<ChangeFeed, (topic: string, result: 'hit' | 'miss' | 'bypass') => void>()
export function observeCaches(feed: ChangeFeed, fn: (topic: string, result: 'hit' | 'miss' | 'bypass') => void): void {
  cacheObservers.set(feed, fn)
}

export class NoticeCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>()
  /** Bumped by every change of this topic: a load that saw it move may hold old data and is not kept. */
  private generation = 0

  constructor(
    private readonly feed: ChangeFeed,
    readonly topic: string,
    private readonly opts: { ttlMs: number; max: number; clock?: { now(): Date }; keep?: (value: V) => boolean },
  ) {
    feed.subscribe(topic, (key) => {
      this.generation++
      this.entries.delete(key)
    })
    feed.onReset(() => {
      this.generation++
      this.entries.clear()
    })
  }

  async get(key: string, load: () => Promise<V>): Promise<V> {
    const observe = cacheObservers.get(this.feed)
    if (!this.feed.live || !this.feed.settled(this.topic, key)) {
      observe?.(this.topic, 'bypass')
      return load()
    }
    const now = this.opts.clock ? this.opts.clock.now().getTime() : Date.now()
    const hit = this.entries.get(key)
    if (hit && hit.until > now) {
      observe?.(this.topic, 'hit')
      return hit.value
    }
    observe?.(this.topic, 'miss')
    const generation = this.generation
    const value = await load()
    if (value !== undefined && (this.opts.keep?.(value) ?? true) && generation === this.generation && this.feed.live && this.feed.settled(this.topic, key)) {
      setBounded(this.entries, key, { value, until: now + this.opts.ttlMs }, this.opts.max)
    }
    return value
  }
}
