import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { CHANGES_CHANNEL, createChangeFeed, type ChangeFeed, type NoticeSource } from './change-feed.js'
import { migrations } from './migrations/index.js'
import { PGliteDialect } from './pglite-dialect.js'
import { namePrepared } from './prepared.js'
import { defaultTemplateDir, ensureTemplate, seedFromTemplate } from './template.js'
import type { Database } from './schema.js'

export type Db = Kysely<Database>

export interface DatabaseHandle {
  db: Db
  kind: 'pglite' | 'postgres'
  features: { vector: boolean }
  /** Change notices between instances (LISTEN/NOTIFY), for caches of hot rows. */
  changes: ChangeFeed
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** PostgreSQL connection string; when absent an embedded PGlite is used. */
  url?: string
  /** Where PGlite keeps its files; `memory` keeps nothing (tests). */
  pgliteDir: string | 'memory'
  poolSize?: number
  /**
   * How long an idle pooled connection stays open, in seconds (0: for the process's life; default 600). A new connection
   * costs PostgreSQL a backend (about 4 ms here) and loses its prepared statements, so pg's default of 10 s made a
   * quiet service's turns reconnect and replan.
   */
  poolIdleSeconds?: number
  /** Statements marked PREPARED (db/prepared.ts) sent as named statements on PostgreSQL; default true. */
  prepared?: boolean
  /** A migrated data directory a fresh pgliteDir starts from (src/db/template.ts); null: none. */
  templateDir?: string | null
}

// int8 and numeric come back as numbers on both drivers (PGlite already does this).
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (v: string) => (v === null ? null : Number(v))
    return pg.types.getTypeParser(oid, format as 'text')
  },
}

/** A statement as sent: its text and parameters. */
export type QueryObserver = (q: { sql: string; parameters: readonly unknown[] }) => void
let queryObserver: QueryObserver | null = null

/**
 * Tests only: every statement of the databases opened after this call is handed to `fn` (test/tenant-filter.test.ts
 * checks that each filters by its tenant). Unset (the default) the databases log nothing and pay nothing.
 */
export function observeQueries(fn: QueryObserver | null): void {
  queryObserver = fn
}
const observed = () => {
  const fn = queryObserver
  return fn ? { log: (e: { level: string; query: { sql: string; parameters: readonly unknown[] } }) => (e.level === 'query' ? fn(e.query) : undefined) } : {}
}

/** A migrated, empty in-memory PGlite as a data-dir image (see openDatabase). */
let memoryImage: Promise<Blob | File | undefined> = Promise.resolve(undefined)

/**
 * Start this process's in-memory databases from an image made elsewhere (the test suite makes one per run, not one
 * per test process: initdb and the migrations in WebAssembly take about 5 s, loading an image about 1 s). An image
 * that fails to load is ignored: the first database then migrates and makes the process's own.
 */
export function setMemoryImage(image: Promise<Blob | undefined>): void {
  memoryImage = image.catch(() => undefined)
}

/** The image of a migrated, empty in-memory PGlite, made now (see setMemoryImage). */
export async function makeMemoryImage(): Promise<Blob> {
  const handle = await openDatabase({ pgliteDir: 'memory' })
  try {
    return await memoryImage.then((image) => image ?? Promise.reject(new Error('no image was made')))
  } finally {
    await handle.close()
  }
}

export async function openDatabase(opts: DatabaseOptions): Promise<DatabaseHandle> {
  let db: Db
  let kind: DatabaseHandle['kind']
  let closeDriver: () => Promise<void>
  let makeImage: (() => Promise<Blob | File>) | null = null
  let notices: NoticeSource & { stop?(): Promise<void> }
  if (opts.url) {
    const pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.poolSize ?? 10,
      idleTimeoutMillis: (opts.poolIdleSeconds ?? 600) * 1000,
      types: pgTypes as never,
    })
    // An idle client losing its connection must not crash the process; nor one checked out and waiting between
    // statements (the worker's liveness lock holds one for its whole life): its next statement fails instead.
    pool.on('error', () => {})
    pool.on('connect', (client) => {
      client.on('error', () => {})
      if (opts.prepared !== false) namePrepared(client)
    })
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), ...observed() })
    kind = 'postgres'
    closeDriver = () => pool.end()
    notices = pgNoticeSource(opts.url)
  } else {
    const { PGlite } = await import('@electric-sql/pglite')
    const { vector } = await import('@electric-sql/pglite-pgvector')
    let dataDir: string | undefined
    if (opts.pgliteDir !== 'memory') {
      // A fresh folder starts as a copy of the build's migrated template: no initdb, only newer migrations.
      seedFromTemplate(opts.pgliteDir, opts.templateDir === undefined ? defaultTemplateDir() : opts.templateDir, migrationNames())
      mkdirSync(opts.pgliteDir, { recursive: true })
      dataDir = opts.pgliteDir
    }
    // In-memory databases (tests) start from a migrated image made once per process: initdb in WebAssembly
    // takes seconds, loading an image well under one.
    const image = dataDir === undefined ? await memoryImage : undefined
    const pglite = await PGlite.create({ dataDir, extensions: { vector }, ...(image ? { loadDataDir: image } : {}) })
    fastBytea(pglite)
    db = new Kysely<Database>({ dialect: new PGliteDialect(pglite), ...observed() })
    kind = 'pglite'
    closeDriver = () => pglite.close()
    if (dataDir === undefined && !image) makeImage = () => pglite.dumpDataDir('none')
    // One process owns a PGlite: its notices never get lost, so the feed is live from the start.
    notices = {
      async start(onPayload, onLive) {
        await pglite.listen(CHANGES_CHANNEL, onPayload)
        onLive(true)
      },
    }
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
  const changes = createChangeFeed(notices)
  await changes.start()
  let closing: Promise<void> | null = null
  return {
    db,
    kind,
    features: { vector: (ext.rows[0]?.n ?? 0) > 0 },
    changes,
    // Idempotent: shutdown paths may close twice (a signal during a failed start, a test teardown).
    close() {
      closing ??= (async () => {
        await notices.stop?.()
        await db.destroy()
        if (kind === 'pglite') await closeDriver()
      })()
      return closing
    },
  }
}

/**
 * LISTEN on a connection of its own (a pooled one would be handed to queries). When it drops, the feed goes
 * not-live (caches stop keeping anything) and it reconnects with backoff; live again once LISTEN is back.
 */
function pgNoticeSource(url: string): NoticeSource & { stop(): Promise<void> } {
  let client: pg.Client | null = null
  let stopped = false
  let timer: NodeJS.Timeout | null = null
  let handlers: { onPayload: (p: string) => void; onLive: (live: boolean) => void } | null = null

  async function connect(attempt: number): Promise<void> {
    if (stopped || !handlers) return
    const c = new pg.Client({ connectionString: url })
    const { onPayload, onLive } = handlers
    let lost = false
    const onLost = () => {
      if (lost) return
      lost = true
      onLive(false)
      if (client === c) client = null
      c.end().catch(() => {})
      if (!stopped) timer = setTimeout(() => void connect(attempt + 1), Math.min(30_000, 250 * 2 ** Math.min(attempt, 7)))
    }
    c.on('error', onLost)
    c.on('end', onLost)
    c.on('notification', (n) => {
      if (n.channel === CHANGES_CHANNEL && n.payload !== undefined) onPayload(n.payload)
    })
    try {
      await c.connect()
      await c.query(`LISTEN ${CHANGES_CHANNEL}`)
    } catch {
      onLost()
      return
    }
    if (stopped) {
      await c.end().catch(() => {})
      return
    }
    client = c
    onLive(true)
  }

  return {
    async start(onPayload, onLive) {
      handlers = { onPayload, onLive }
      await connect(0)
    },
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      const c = client
      client = null
      await c?.end().catch(() => {})
    },
  }
}

export async function migrate(db: Kysely<any>): Promise<string[]> {
  if (await allApplied(db)) return []
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

const migrationNames = () => Object.keys(migrations).sort()

/**
 * Whether the database holds exactly this code's migrations, in two short reads. Most opens find that, and
 * Kysely's Migrator would still introspect every table of the catalog and take its lock to learn it (about
 * 600 ms of a warm embedded start; two reads instead). Any other state (none applied, one missing, one this code does not know)
 * goes to the Migrator as before, which migrates or refuses.
 */
async function allApplied(db: Kysely<any>): Promise<boolean> {
  const known = migrationNames()
  const table = await sql<{ t: string | null }>`SELECT to_regclass('schema_migrations')::text AS t`.execute(db)
  if (!table.rows[0]?.t) return false
  const r = await sql<{ name: string }>`SELECT name FROM schema_migrations`.execute(db)
  const applied = new Set(r.rows.map((row) => row.name))
  return applied.size === known.length && known.every((n) => applied.has(n))
}

/** `npm run build`: writes (or keeps, when current) the migrated template a fresh data directory starts from. */
export function buildTemplate(templateDir: string): Promise<'kept' | 'made'> {
  return ensureTemplate(templateDir, migrationNames(), async (pgdataDir) => {
    const handle = await openDatabase({ pgliteDir: pgdataDir, templateDir: null })
    await handle.close()
  })
}

export const defaultPgliteDir = (dataDir: string) => join(dataDir, 'pgdata')

const BYTEA = 17

/**
 * A bytea value crosses PGlite's driver as bytes (a binary parameter) and comes back through Buffer's own hex
 * decoder, as node-postgres does it. The driver's own codec turns each byte into a string of its own, both ways:
 * for a 10 MB attachment that ran a 320 MB heap out of memory, and a 2 MB one cost more than the rest of its turn.
 */
function fastBytea(pglite: { serializers: Record<number, (x: any) => any>; parsers: Record<number, (x: string, typeId?: number) => any> }) {
  const serialize = pglite.serializers[BYTEA]
  // the protocol writer sends a typed array as a binary parameter, as it is
  pglite.serializers[BYTEA] = (x) => (x instanceof Uint8Array ? x : serialize?.(x))
  pglite.parsers[BYTEA] = (x) => Buffer.from(x.slice(2), 'hex') // bytea_output hex: '\\x…'
}
