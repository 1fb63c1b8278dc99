import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import type pg from 'pg'

/**
 * Prepared statements for the few hot statements whose text is large and fixed: a turn's write (turn-write.ts) and
 * what a hand-off reads. PostgreSQL parses and plans an unnamed statement again on every call; for the turn's write,
 * a dozen CTEs, that was about 2.5 ms of its server time at one client, more than running it. A statement whose text
 * starts with PREPARED is sent on PostgreSQL as a named statement (named by its text's hash), parsed once per
 * connection and, after five runs, planned once (PostgreSQL's generic plan, kept when it costs no more than the
 * custom ones). Mark only statements whose text takes a few fixed shapes (values as parameters, never spliced in),
 * that find their rows by key: each shape is one prepared statement per connection.
 *
 * The embedded database ignores the mark (a comment). A pooler in transaction mode without prepared-statement
 * support (PgBouncer before 1.21) needs them off: DATABASE_PREPARED_STATEMENTS=false.
 */
export const PREPARED = sql.raw('/*prepared*/ ')

const MARK = '/*prepared*/'

/**
 * The tenant's check on rows a prepared statement finds by another key (a session by its id, a session's messages
 * or tickets by its id): written so that no index serves it, so the rows are found by that key and the tenant only
 * checked. PostgreSQL makes a prepared statement's generic plan once per connection, from the statistics of that
 * moment, and keeps it until the table is analysed again: from a small table it took the tenant's (tenant_id,
 * created_at) index instead, so each turn scanned all the tenant's sessions (49-299 rows in bench:chat, twice a
 * hand-off), more as they grew, until autovacuum's next analyze of the table replanned it.
 */
export const tenantChecked = (tenantId: string, column = 'tenant_id') => sql`${sql.ref(column)} IS NOT DISTINCT FROM ${tenantId}::uuid`

/** Gives a pooled connection's `query` the named form for statements marked PREPARED. */
export function namePrepared(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (config: unknown, values?: unknown, cb?: unknown) => unknown
  const named = new Map<string, string>()
  const nameOf = (text: string) => {
    let name = named.get(text)
    if (!name) {
      name = `p${createHash('sha1').update(text).digest('hex').slice(0, 24)}`
      named.set(text, name)
    }
    return name
  }
  client.query = ((config: unknown, values?: unknown, cb?: unknown) => {
    if (typeof config === 'string' && config.startsWith(MARK) && (values === undefined || Array.isArray(values)))
      return query({ name: nameOf(config), text: config, values }, cb)
    return query(config, values, cb)
  }) as typeof client.query
}
