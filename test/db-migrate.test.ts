import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type DatabaseHandle, migrate, openDatabase } from '../src/db/client.js'
import { migrations } from '../src/db/migrations/index.js'
import { cloneDatabase } from './helpers/app.js'

/**
 * An open that finds every migration applied reads the applied names and stops there (src/db/client.ts
 * allApplied); any other state still goes through Kysely's Migrator: a missing migration runs, one this code
 * does not know is refused. On the embedded database, or a clone on PostgreSQL when DATABASE_URL is set.
 */
let handle: DatabaseHandle
let drop: (() => Promise<void>) | undefined
beforeAll(async () => {
  const clone = await cloneDatabase()
  drop = clone?.drop
  handle = await openDatabase(clone ? { url: clone.url, pgliteDir: 'memory', poolSize: 2 } : { pgliteDir: 'memory' })
})
afterAll(async () => {
  await handle?.close()
  await drop?.()
})

it('finds every migration applied and runs none; hands a missing one to the Migrator; refuses one it does not know', async () => {
  const names = Object.keys(migrations).sort()
  expect(await migrate(handle.db)).toEqual([])
  const last = names[names.length - 1]!
  // its row gone, the newest migration is run again by the Migrator: one that adds a table or index fails (what it
  // adds is there already), one that only mends data runs again and is recorded; either way it was not skipped
  const row = await sql<{ timestamp: string }>`SELECT timestamp FROM schema_migrations WHERE name = ${last}`.execute(handle.db)
  await sql`DELETE FROM schema_migrations WHERE name = ${last}`.execute(handle.db)
  const rerun = await migrate(handle.db).then(
    (ran) => ran,
    (err: Error) => err,
  )
  if (rerun instanceof Error) expect(rerun.message).toMatch(/already exists/)
  else expect(rerun).toEqual([last])
  await sql`DELETE FROM schema_migrations WHERE name = ${last}`.execute(handle.db)
  await sql`INSERT INTO schema_migrations (name, timestamp) VALUES (${last}, ${row.rows[0]!.timestamp})`.execute(handle.db)
  expect(await migrate(handle.db)).toEqual([])
  await sql`INSERT INTO schema_migrations (name, timestamp) VALUES ('9999_from_a_newer_version', now()::text)`.execute(handle.db)
  await expect(migrate(handle.db)).rejects.toThrow(/9999_from_a_newer_version/)
  await sql`DELETE FROM schema_migrations WHERE name = '9999_from_a_newer_version'`.execute(handle.db)
})
