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

/** A migrated, empty in-memory PGlite as a data-dir image (see openDatabase). */
let memoryImage: Promise<Blob | File | undefined> = Promise.resolve(undefined)

export async function openDatabase(opts: DatabaseOptions): Promise<DatabaseHandle> {
  let db: Db
  let kind: DatabaseHandle['kind']
  let closeDriver: () => Promise<void>
  let makeImage: (() => Promise<Blob | File>) | null = null
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
    // In-memory databases (tests) start from a migrated image made once per process: initdb in WebAssembly
    // takes seconds, loading an image well under one.
    const image = dataDir === undefined ? await memoryImage : undefined
    const pglite = await PGlite.create({ dataDir, extensions: { vector }, ...(image ? { loadDataDir: image } : {}) })
    db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) })
    kind = 'pglite'
    closeDriver = () => pglite.close()
    if (dataDir === undefined && !image) makeImage = () => pglite.dumpDataDir('none')
  }
  try {
    await migrate(db)
  } catch (err) {
    await db.destroy().catch(() => {})
    await closeDriver().catch(() => {})
    throw err
  }
  if (makeImage) {
    const made = makeImage().catch(() => undefined)
    memoryImage = made
    await made
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
