import type { PGlite } from '@electric-sql/pglite'
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely'

/**
 * Kysely dialect over an in-process PGlite. PGlite is one connection, so connections are handed out one
 * at a time: a transaction holds the connection until it ends and every other query waits for it.
 * Consequence for callers: inside `db.transaction()` use the transaction object only (using the outer
 * `db` there would wait for itself).
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}
  createAdapter() {
    return new PostgresAdapter()
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite)
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler()
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db)
  }
}

class PGliteDriver implements Driver {
  private queue: Promise<void> = Promise.resolve()
  private readonly connection: PGliteConnection

  constructor(pglite: PGlite) {
    this.connection = new PGliteConnection(pglite)
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void
    const previous = this.queue
    this.queue = new Promise<void>((r) => (release = r))
    await previous
    this.connection.release = release
    return this.connection
  }

  async beginTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('begin'))
  }
  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'))
  }
  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'))
  }
  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    ;(conn as PGliteConnection).release?.()
  }
  async destroy(): Promise<void> {}
}

class PGliteConnection implements DatabaseConnection {
  release?: () => void
  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    // Parameterless statements may hold several commands (migrations); exec() allows that.
    if (compiled.parameters.length === 0) {
      const results = await this.pglite.exec(compiled.sql)
      const last = results[results.length - 1]
      return { rows: (last?.rows ?? []) as R[], numAffectedRows: toBig(last?.affectedRows) }
    }
    const result = await this.pglite.query<R>(compiled.sql, compiled.parameters as unknown[])
    return { rows: result.rows, numAffectedRows: toBig(result.affectedRows) }
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on PGlite')
  }
}

const toBig = (n: number | undefined) => (n === undefined ? undefined : BigInt(n))
