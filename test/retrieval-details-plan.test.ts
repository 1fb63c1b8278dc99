import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, inject, it } from 'vitest'
import { openDatabase, type DatabaseHandle, type Db } from '../src/db/client.js'
import { createRetrievalRepo } from '../src/modules/retrieval/retrieval.repo.js'

/**
 * The chunk details of a search (issue 51): read through the primary key whatever the workspace's size. Prepared on
 * PostgreSQL, the statement's generic plan once ANDed in the tenant's (tenant_id, document_id) btree, reading every
 * entry of the workspace (66 ms at 1,000,000 chunks). Here the generic plan is forced (on both databases) and must not
 * touch that index; the rows are the tenant's own and no other's.
 */
let handle: DatabaseHandle
let db: Db

async function workspace(n: number): Promise<string[]> {
  const user = await sql<{
    id: string
  }>`INSERT INTO users (email, password_hash, created_at, updated_at) VALUES (${`${randomUUID()}@x.test`}, 'x', now(), now()) RETURNING id`.execute(db)
  const t = await sql<{
    id: string
  }>`INSERT INTO tenants (name, owner_user_id, pii_optional_types, created_at, updated_at) VALUES ('t', ${user.rows[0]!.id}, '[]', now(), now()) RETURNING id`.execute(
    db,
  )
  const tenantId = t.rows[0]!.id
  const doc = await sql<{
    id: string
  }>`INSERT INTO documents (tenant_id, filename, file_type, title, content_hash, size_bytes) VALUES (${tenantId}, 'kb.md', 'markdown', 'kb', ${randomUUID()}, 1) RETURNING id`.execute(
    db,
  )
  const { rows } = await sql<{ id: string }>`
    INSERT INTO chunks (tenant_id, document_id, ordinal, content, token_count, lang, tsv)
    SELECT ${tenantId}::uuid, ${doc.rows[0]!.id}::uuid, i, 'page ' || i, 2, 'english', to_tsvector('english', 'page ' || i) FROM generate_series(0, ${n - 1}) i
    RETURNING id`.execute(db)
  return [tenantId, ...rows.map((r) => r.id)]
}

beforeAll(async () => {
  handle = await openDatabase({ url: inject('databaseUrl'), pgliteDir: 'memory' })
  db = handle.db
})
afterAll(async () => {
  await handle?.close()
})

it('reads a search result chunk details by primary key, not by the workspace index, and only the tenant own rows', async () => {
  const [big, ...bigIds] = await workspace(3000)
  const [small, ...smallIds] = await workspace(3)
  await sql`ANALYZE chunks`.execute(db)
  const repo = createRetrievalRepo(db, handle.features)

  const want = bigIds.slice(100, 130)
  const got = await repo.details(big!, [...want, smallIds[0]!])
  expect(got.map((r) => r.id).sort()).toEqual([...want].sort())
  expect(got.every((r) => r.doc_title === 'kb' && r.content.startsWith('page '))).toBe(true)
  expect((await repo.details(small!, smallIds)).length).toBe(3)
  expect(await repo.details(small!, want)).toEqual([])

  // the plan a prepared statement would reuse: parameters, no values known when it is made
  await db.connection().execute(async (conn) => {
    await sql`SET plan_cache_mode = force_generic_plan`.execute(conn)
    await sql
      .raw(`PREPARE details_plan(uuid, uuid[]) AS
        SELECT k.id FROM (
          SELECT c.id, c.tenant_id, c.document_id FROM chunks c WHERE c.id = ANY($2::uuid[]) AND (c.tenant_id = $1) IS TRUE OFFSET 0
        ) k JOIN documents d ON d.id = k.document_id AND d.tenant_id = k.tenant_id`)
      .execute(conn)
    // uuids read back from the database: safe as literals (EXPLAIN EXECUTE takes no bound parameters)
    const plan = await sql<Record<string, unknown>>`EXPLAIN EXECUTE details_plan(${sql.raw(`'${big}'`)}, ${sql.raw(`'{${want.join(',')}}'`)})`.execute(conn)
    const text = plan.rows.map((r) => Object.values(r).join(' ')).join('\n')
    await sql`DEALLOCATE details_plan`.execute(conn)
    await sql`RESET plan_cache_mode`.execute(conn)
    expect(text).toContain('chunks_pkey')
    expect(text).not.toContain('chunks_tenant_document_idx')
  })
  // the statement above is the repository's own (kept in step with retrieval.repo.ts details())
  const source = await import('node:fs').then((fs) => fs.readFileSync(new URL('../src/modules/retrieval/retrieval.repo.ts', import.meta.url), 'utf8'))
  expect(source).toContain('WHERE c.id = ANY(${ids}::uuid[]) AND (c.tenant_id = ${tenantId}) IS TRUE')
  expect(source).toContain(') k JOIN documents d ON d.id = k.document_id AND d.tenant_id = k.tenant_id')
})
