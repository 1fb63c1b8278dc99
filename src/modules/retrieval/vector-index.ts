import type { Db } from '../../db/client.js'
import { type ChangeFeed, NoticeCache } from '../../db/change-feed.js'
import type { JobQueue } from '../../jobs/queue.js'
import { defineJob } from '../../jobs/types.js'
import { efSearchFor, indexPays, type VectorIndexSpec, vectorIndexSpec } from './vector-index.fns.js'
import type { VectorIndexRepo, VectorIndexState } from './vector-index.repo.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** Builds the shared HNSW index of an embedding model and width (vector-index.fns.ts); idempotent. */
    'retrieval.vector_index': { model: string; dims: number; type?: 'halfvec' | 'vector' }
  }
}

/** Announced on the change feed when an index becomes valid: every instance's searches switch to it at once. */
export const VECTOR_INDEX_TOPIC = 'vector_index'
/** A workspace past the size asks for its index at most this often per process while it is not valid. */
const ENQUEUE_EVERY_MS = 60_000

export interface VectorIndexSettings {
  model: string
  /** Embedded chunks from which a workspace's vector search goes through the index (RETRIEVAL_VECTOR_INDEX_MIN_CHUNKS). */
  minChunks: number
  /** `hnsw.ef_search`'s floor (RETRIEVAL_HNSW_EF_SEARCH). */
  efSearch: number
  /** halfvec or vector (preferredIndexType of the database kind) */
  prefer: 'halfvec' | 'vector'
}

/**
 * Which vector search a workspace gets: the exact scan of its own rows while it is small, the shared index of its
 * model and width once it is past the size and the index is valid. A workspace past the size whose index does not
 * exist yet enqueues its build (deduplicated) and keeps the exact scan until the build's notice arrives.
 */
export function createVectorIndexes(deps: {
  repo: Pick<VectorIndexRepo, 'state'>
  queue: Pick<JobQueue, 'enqueue'>
  changes: ChangeFeed
  settings: VectorIndexSettings
}) {
  const { settings } = deps
  const states = new NoticeCache<VectorIndexState>(deps.changes, VECTOR_INDEX_TOPIC, { ttlMs: 60_000, max: 1000 })
  const asked = new Map<string, number>()

  return {
    minChunks: settings.minChunks,

    /** Whether the index of the service's model at this width exists and is valid. */
    async valid(dims: number): Promise<boolean> {
      const spec = vectorIndexSpec(settings.model, dims, settings.prefer)
      return !!spec && (await states.get(spec.name, () => deps.repo.state(spec))) === 'valid'
    },

    async forSearch(embeddedChunks: number, dims: number, k: number): Promise<{ spec: VectorIndexSpec; efSearch: number } | null> {
      if (!indexPays(embeddedChunks, settings.minChunks)) return null
      const spec = vectorIndexSpec(settings.model, dims, settings.prefer)
      if (!spec) return null
      const state = await states.get(spec.name, () => deps.repo.state(spec))
      if (state === 'valid') return { spec, efSearch: efSearchFor(k, settings.efSearch) }
      const now = Date.now()
      if ((asked.get(spec.name) ?? 0) + ENQUEUE_EVERY_MS <= now) {
        asked.set(spec.name, now)
        await deps.queue.enqueue(
          'retrieval.vector_index',
          { model: spec.model, dims, type: spec.type },
          { dedupeKey: `retrieval.vector_index:${spec.name}`, maxAttempts: 3 },
        )
      }
      return null
    },
  }
}

export type VectorIndexes = ReturnType<typeof createVectorIndexes>

export const vectorIndexJobs = (deps: {
  db: Db
  repo: VectorIndexRepo
  changes: ChangeFeed /** maintenance_work_mem for a build, in MB */
  maintenanceMb: number
  log: { info(o: object, m: string): void }
}) => [
  defineJob({
    kind: 'retrieval.vector_index',
    maxAttempts: 3,
    async handler({ model, dims, type }) {
      const spec = vectorIndexSpec(model, dims, type)
      if (!spec || (await deps.repo.state(spec)) === 'valid') return
      const t0 = performance.now()
      await deps.repo.build(spec, deps.maintenanceMb)
      deps.log.info({ index: spec.name, model, dims, ms: Math.round(performance.now() - t0) }, 'vector index built')
      await deps.changes.announce(deps.db, VECTOR_INDEX_TOPIC, spec.name)
    },
  }),
]
