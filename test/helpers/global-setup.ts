import pg from 'pg'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string | undefined
  }
}

/**
 * With DATABASE_URL set, the suite runs in a database of its own, created here and dropped at the end, so
 * runs never see each other's rows or an older schema. Without it every app uses an in-memory PGlite.
 */
export default async function setup(project: TestProject) {
  const base = process.env.DATABASE_URL
  if (!base) {
    project.provide('databaseUrl', undefined)
    return
  }
  const name = `scb_test_${Date.now()}_${process.pid}`
  const admin = new pg.Client({ connectionString: base })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(base)
  url.pathname = `/${name}`
  project.provide('databaseUrl', url.toString())
  return async () => {
    const c = new pg.Client({ connectionString: base })
    await c.connect()
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await c.end()
  }
}
