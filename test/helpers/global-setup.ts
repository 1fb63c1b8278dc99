import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { makeMemoryImage, openDatabase } from '../../src/db/client.js'
import { adminQuery } from './pg-admin.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The server to create test databases on (DATABASE_URL), or undefined for PGlite. */
    databaseUrl: string | undefined
    /** A migrated database each test app is cloned from (CREATE DATABASE ... TEMPLATE). */
    databaseTemplate: string | undefined
    /** A file holding a migrated, empty PGlite's image every test process starts its in-memory databases from. */
    pgliteImage: string | undefined
  }
}

/**
 * With DATABASE_URL set, every test app gets a database of its own, cloned from a template migrated here
 * once, so apps never see each other's rows or jobs (a worker of one app would otherwise send another
 * app's mail to the wrong SMTP server). Everything this run created is dropped at the end. Without
 * DATABASE_URL every app uses an in-memory PGlite, which is isolated the same way, loaded from an image made here.
 */
export default async function setup(project: TestProject) {
  const base = process.env.DATABASE_URL
  if (!base) {
    project.provide('databaseUrl', undefined)
    project.provide('databaseTemplate', undefined)
    // Made once here rather than once per test file (about 4 s of initdb and migrations each, in WebAssembly).
    const dir = mkdtempSync(join(tmpdir(), 'scb-image-'))
    const file = join(dir, 'pglite.tar')
    writeFileSync(file, Buffer.from(await (await makeMemoryImage()).arrayBuffer()))
    project.provide('pgliteImage', file)
    return () => rmSync(dir, { recursive: true, force: true })
  }
  project.provide('pgliteImage', undefined)
  const prefix = `scb_test_${Date.now()}_${process.pid}`
  const template = `${prefix}_tpl`
  await adminQuery(base, `CREATE DATABASE ${template}`)
  const url = new URL(base)
  url.pathname = `/${template}`
  const handle = await openDatabase({ url: url.toString(), pgliteDir: 'memory', poolSize: 1 })
  await handle.close()
  project.provide('databaseUrl', base)
  project.provide('databaseTemplate', template)
  return async () => {
    const c = new pg.Client({ connectionString: base })
    await c.connect()
    const { rows } = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${prefix}%`])
    for (const r of rows) await c.query(`DROP DATABASE IF EXISTS ${r.datname} WITH (FORCE)`)
    await c.end()
  }
}
