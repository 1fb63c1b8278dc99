import pg from 'pg'

/** One statement on its own short-lived connection (CREATE/DROP DATABASE, pg_stat_activity probes): tests and benches. */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(connectionString: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString })
  await c.connect()
  try {
    return (await c.query<R>(sql, params)).rows
  } finally {
    await c.end()
  }
}
