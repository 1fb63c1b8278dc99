import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import type { VectorIndexSpec } from './vector-index.fns.js'

/** absent: not built; building: CREATE INDEX CONCURRENTLY under way or failed (not valid yet); valid: the planner may use it. */
export type VectorIndexState = 'absent' | 'building' | 'valid'

/**
 * The shared HNSW indexes on chunks (vector-index.fns.ts). Not a tenant's rows: an index serves every workspace of its
 * model and width, so these statements take no tenant id.
 */
export function createVectorIndexRepo(db: Db, kind: 'pglite' | 'postgres') {
  async function stateOn(executor: Db, spec: VectorIndexSpec): Promise<VectorIndexState> {
    const { rows } = await sql<{ valid: boolean }>`
      SELECT i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
      WHERE c.relname = ${spec.name} AND c.relnamespace = current_schema()::regnamespace
    `.execute(executor)
    const r = rows[0]
    return !r ? 'absent' : r.valid ? 'valid' : 'building'
  }

  return {
    state: (spec: VectorIndexSpec) => stateOn(db, spec),

    /**
     * Builds the index. On PostgreSQL CONCURRENTLY, so writes to chunks go on while it is built (it waits for the
     * transactions open at its start); a build that failed leaves an invalid index, dropped first here. PGlite has one
     * connection and no concurrent build: a plain CREATE INDEX, during which the embedded database answers nothing else
     * (its build time is in docs/performance.md). `maintenanceMb`: the graph is built much faster while it fits.
     */
    async build(spec: VectorIndexSpec, maintenanceMb: number): Promise<void> {
      const cast = `${spec.type}(${spec.dims})`
      const ops = spec.type === 'halfvec' ? 'halfvec_cosine_ops' : 'vector_cosine_ops'
      const concurrently = kind === 'postgres' ? sql.raw('CONCURRENTLY ') : sql.raw('')
      // ef_construction 128 on PostgreSQL: at 1,000,000 chunks pgvector's default 64 built a graph whose recall@40 was
      // 0.850 at every ef_search up to 200 (some pages unreachable), 128 gave 1.000 on the same data for twice the
      // build time (docs/performance.md, session 26). The embedded database keeps the default: its WebAssembly build
      // is slow already and holds the event loop, and its workspaces are far smaller.
      const withParams = kind === 'postgres' ? sql.raw(' WITH (m = 16, ef_construction = 128)') : sql.raw('')
      await db.connection().execute(async (conn) => {
        await sql`SELECT set_config('maintenance_work_mem', ${`${maintenanceMb}MB`}, false)`.execute(conn)
        try {
          if ((await stateOn(conn, spec)) === 'building' && kind === 'postgres') await sql`DROP INDEX CONCURRENTLY IF EXISTS ${sql.id(spec.name)}`.execute(conn)
          await sql`
            CREATE INDEX ${concurrently}IF NOT EXISTS ${sql.id(spec.name)} ON chunks
            USING hnsw ((embedding::${sql.raw(cast)}) ${sql.raw(ops)})${withParams}
            WHERE embedding_model = ${sql.lit(spec.model)} AND vector_dims(embedding) = ${sql.lit(spec.dims)}
          `.execute(conn)
        } finally {
          await sql`RESET maintenance_work_mem`.execute(conn)
        }
      })
    },
  }
}

export type VectorIndexRepo = ReturnType<typeof createVectorIndexRepo>
