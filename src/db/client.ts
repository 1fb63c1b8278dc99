import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { migrations } from './migrations/index.js'
import { PGliteDialect } from './pglite-dialect.js'
import type { Database } from './schema.js'

export type Db = Kysely<Database>

export interface DatabaseHandle {
  db: Db
  kind: 'pglite' | 'postgres'
  features: { vector: boolean }
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** PostgreSQL connection string; when absent an embedded PGlite is used. */
  url?: string
  /** Where PGlite keeps its files; `memory` keeps nothing (tests). */
  pgliteDir: string | 'memory'
  poolSize?: number
}

// int8 and numeric come back as numbers on both drivers (PGlite already does this).
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (v: string) => (v === null ? null : Number(v))
    return pg.types.getTypeParser(oid, format as 'text')
  },
}

export async function openDatabase(opts: DatabaseOptions): Promise<DatabaseHandle> {
  let db: Db
  let kind: DatabaseHandle['kind']
  let closeDriver: () => Promise<void>
  if (opts.url) {
    const pool = new pg.Pool({ connectionString: opts.url, max: opts.poolSize ?? 10, types: pgTypes as never })
    // An idle client losing its connection must not crash the process.
    pool.on('error', () => {})
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    kind = 'postgres'
    closeDriver = () => pool.end()
  } else {
    const { PGlite } = await import('@electric-sql/pglite')
    const { vector } = await import('@electric-sql/pglite-pgvector')
    let dataDir: string | undefined
    if (opts.pgliteDir !== 'memory') {
      mkdirSync(opts.pgliteDir, { recursive: true })
      dataDir = opts.pgliteDir
    }
    const pglite = await PGlite.create({ dataDir, extensions: { vector } })
    db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) })
    kind = 'pglite'
    closeDriver = () => pglite.close()
  }
  try {
    await migrate(db)
  } catch (err) {
    await db.destroy().catch(() => {})
    await closeDriver().catch(() => {})
    throw err
  }
  const ext = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'vector'`.execute(db)
  let closing: Promise<void> | null = null
  return {
    db,
    kind,
    features: { vector: (ext.rows[0]?.n ?? 0) > 0 },
    // Idempotent: shutdown paths may close twice (a signal during a failed start, a test teardown).
    close() {
      closing ??= (async () => {
        await db.destroy()
        if (kind === 'pglite') await closeDriver()
      })()
      return closing
    },
  }
}

export async function migrate(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

export const defaultPgliteDir = (dataDir: string) => join(dataDir, 'pgdata')
