import { readFileSync } from 'node:fs'
import { CompiledQuery, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { observeQueries } from '../src/db/client.js'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi, REFUNDS_MD, SHIPPING_MD, withDocsAndVectors } from './helpers/chat.js'
import { createTenant } from './helpers/factories.js'
import { handedOff } from './helpers/live.js'

/**
 * Issue 51, beyond one machine: sharding by workspace (Citus distributes tables by a tenant column) needs every
 * statement on a tenant's table to say which tenant, or it goes to every shard. This runs a representative set of HTTP
 * flows (sign-up, upload and embedding, a turn through the API, a widget hand-off, every dashboard GET the flows give
 * ids for) with every statement recorded (observeQueries), then asks the database for each distinct statement's plan
 * (EXPLAIN VERBOSE with the statement's own parameters: PostgreSQL's parser and planner decide, not a pattern over the
 * text) and requires each scan of a table with a tenant_id column to have a condition on that alias's tenant_id, its
 * own or a join's above it (a join on `x.tenant_id = y.tenant_id` is co-located in Citus).
 *
 * The statements that are cross-tenant by design are listed below with the reason; a new statement that is neither
 * filtered nor listed fails the test. Entries are not required to match in every run: background jobs (sweeps, the
 * queue's claims) run on the worker's timing.
 */
const SWEEP =
  'a background job over every workspace (retention, recovery, schedules, backfills): in Citus a multi-shard statement of the worker, not of a request'
const ROUTING = 'finds the workspace from a global key before its tenant is known: in Citus a lookup table from that key to the tenant (or a reference table)'
const CROSS_TENANT: { table: string; match: string; why: string }[] = [
  {
    table: 'users',
    match: '',
    why: 'the identity table: a person signs in by e-mail before any workspace is known, and members are named across joins; a reference table in Citus',
  },
  { table: 'jobs', match: '', why: "the service's job queue (claims, leases, dedupe), not a workspace's data: stays a local table of the coordinator" },
  { table: 'api_keys', match: 'where "api_keys"."key_hash" = $1', why: ROUTING },
  { table: 'bots', match: 'select * from "bots" where "public_id" = $1', why: ROUTING },
  { table: 'escalation_tickets', match: 'from "escalation_tickets" where "user_email_enc" is not null and "user_email_hash" is null', why: SWEEP },
  { table: 'chat_sessions', match: 'from "chat_sessions" where "visitor_email_enc" is not null and "visitor_email_hash" is null', why: SWEEP },
  { table: 'crawl_runs', match: 'from "crawl_runs" as "r" where "r"."status" = $1 and not exists', why: SWEEP },
  { table: 'chat_sessions', match: 'select distinct "tenant_id" from "chat_sessions" where "owner" = $1', why: SWEEP },
  { table: 'idempotency_keys', match: 'delete from "idempotency_keys" where "expires_at" < $1', why: SWEEP },
  { table: 'url_sources', match: 'from "url_sources" where "next_crawl_at" <= $1', why: SWEEP },
  { table: 'embedding_failures', match: 'from "embedding_failures" where "scope" = $1 and "model" = $2', why: SWEEP },
  { table: 'pii_events', match: 'DELETE FROM pii_events e WHERE e.created_at <', why: SWEEP },
  { table: 'live_events', match: 'DELETE FROM live_events WHERE ctid IN', why: SWEEP },
  { table: 'audit_log', match: 'DELETE FROM audit_log a WHERE a.at <', why: SWEEP },
  { table: 'chat_sessions', match: 'UPDATE chat_sessions s SET visitor_gone = true', why: SWEEP },
  { table: 'chat_sessions', match: 'where "t"."visitor_gone" = $1', why: SWEEP },
  {
    table: 'chat_sessions',
    match: 'SELECT tenant_id, session_id, at FROM ( SELECT tenant_id, id AS session_id, last_activity_at AS at FROM chat_sessions',
    why: SWEEP,
  },
  {
    table: 'escalation_tickets',
    match: 'SELECT tenant_id, session_id, at FROM ( SELECT tenant_id, id AS session_id, last_activity_at AS at FROM chat_sessions',
    why: SWEEP,
  },
  { table: 'webhook_deliveries', match: 'delete from "webhook_deliveries" where "status" <> $1 and "finished_at" <', why: SWEEP },
  { table: 'webhook_deliveries', match: 'delete from "webhook_events" where "created_at" < $1', why: SWEEP },
  { table: 'webhook_events', match: 'delete from "webhook_events" where "created_at" < $1', why: SWEEP },
  { table: 'analytics_exports', match: 'from "analytics_exports" where "file_name" is not null and "expires_at" <=', why: SWEEP },
  { table: 'knowledge_profiles', match: 'from "knowledge_profiles" where "dirty_at" is not null', why: SWEEP },
  { table: 'analytics_dirty', match: 'from "analytics_dirty" order by "marked_at"', why: SWEEP },
  { table: 'attachments', match: 'delete from "attachments" where ("created_at" <', why: SWEEP },
  { table: 'eval_runs', match: 'from "eval_runs" as "r" where "r"."status" in', why: SWEEP },
]

let fake: FakeLlm
let t: TestApp
const statements = new Map<string, readonly unknown[]>()

beforeAll(async () => {
  observeQueries((q) => {
    if (!statements.has(q.sql)) statements.set(q.sql, q.parameters)
  })
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url } })
})
afterAll(async () => {
  observeQueries(null)
  await t?.close()
  await fake?.close()
})

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  Alias?: string
  Plans?: PlanNode[]
  [key: string]: unknown
}
const CONDITIONS = ['Filter', 'Index Cond', 'Recheck Cond', 'TID Cond', 'Hash Cond', 'Merge Cond', 'Join Filter', 'One-Time Filter']
const conditionsOf = (n: PlanNode) =>
  CONDITIONS.map((k) => n[k])
    .filter((c): c is string => typeof c === 'string')
    .join(' ')

/** The tenant tables scanned without a condition on their tenant_id in the plan. */
function unfiltered(node: PlanNode, tenantTables: Set<string>, above = ''): string[] {
  // a bitmap heap scan's index conditions are in its bitmap index scans below it
  const own = `${conditionsOf(node)} ${node['Node Type'] === 'Bitmap Heap Scan' ? (node.Plans ?? []).map(conditionsOf).join(' ') : ''}`
  const out: string[] = []
  const rel = node['Relation Name']
  if (rel && tenantTables.has(rel) && node['Node Type'] !== 'ModifyTable') {
    const alias = node.Alias ?? rel
    if (!`${own} ${above}`.includes(`${alias}.tenant_id`)) out.push(rel)
  }
  for (const child of node.Plans ?? []) out.push(...unfiltered(child, tenantTables, `${above} ${conditionsOf(node)}`))
  return out
}

const flat = (s: string) => s.replace(/\s+/g, ' ').trim()

describe('every statement on a tenant table filters by tenant_id', () => {
  it('holds for the statements of the main HTTP flows, with the cross-tenant ones listed and justified', async () => {
    const owner = await createTenant(t)
    const docs = await withDocsAndVectors(t, owner, { 'refunds.md': REFUNDS_MD, 'shipping.md': SHIPPING_MD })
    const turn = await chatApi(t, owner).post('/chat', { question: 'How long do refunds take?' })
    expect(turn.status, turn.text).toBe(200)
    const { sid, ticket } = await handedOff(t, owner)
    const ids: Record<string, string> = {
      bot_id: owner.bot.id,
      document_id: docs['refunds.md']!,
      session_id: sid,
      ticket_id: ticket.id,
      tenant_id: owner.tenantId,
    }
    // every dashboard GET of the route map whose parameters the flows above give
    const map = readFileSync('docs/ARCHITECTURE.md', 'utf8')
    const paths = [...map.matchAll(/^\| GET \| `([^`]+)` \| `src\/modules\/(?!dashboard|widget)/gm)].map((m) => m[1]!)
    let asked = 0
    for (const path of paths) {
      if (path.endsWith('/events') || path.includes('*')) continue
      const filled = path.replace(/:(\w+)/g, (_, name: string) => ids[name] ?? `:${name}`)
      if (filled.includes(':')) continue
      await owner.api.get(filled)
      asked++
    }
    expect(asked).toBeGreaterThan(30)
    observeQueries(null)

    const { rows: cols } = await sql<{ table_name: string }>`
      SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'tenant_id' AND table_schema = current_schema()
    `.execute(t.ctx.db)
    const tenantTables = new Set(cols.map((c) => c.table_name))
    expect(tenantTables.has('chunks')).toBe(true)

    const violations: string[] = []
    const unexplained: string[] = []
    let checked = 0
    for (const [text, params] of statements) {
      const body = text.replace(/^\s*\/\*prepared\*\/\s*/, '')
      if (!/^\s*(select|insert|update|delete|with)\b/i.test(body) || /\bpg_(class|index|extension|stat_activity|try_advisory|advisory)/.test(body)) continue
      let plan: PlanNode
      try {
        const r = await t.ctx.db.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`EXPLAIN (VERBOSE, FORMAT JSON) ${body}`, [...params]))
        const json = r.rows[0]!['QUERY PLAN']
        plan = (typeof json === 'string' ? JSON.parse(json) : json)[0].Plan
      } catch (err) {
        unexplained.push(`${(err as Error).message}: ${flat(body).slice(0, 200)}`)
        continue
      }
      checked++
      for (const table of new Set(unfiltered(plan, tenantTables))) {
        if (CROSS_TENANT.some((x) => x.table === table && flat(body).includes(x.match))) continue
        violations.push(`${table}: ${flat(body).slice(0, 240)}`)
      }
    }
    expect(checked).toBeGreaterThan(100)
    expect(unexplained).toEqual([])
    expect(violations).toEqual([])
  }, 180_000)
})
