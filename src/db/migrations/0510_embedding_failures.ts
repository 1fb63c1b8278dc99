import { sql, type Kysely } from 'kysely'

/**
 * Why a tenant's chunks lack vectors of the embedding model in use: written by the embedding run that
 * failed, deleted by the one that embedded everything. Documents with chunks still missing vectors show
 * the reason; the backfill and the provider probe read it to decide when to try again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE embedding_failures (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      model text NOT NULL,
      reason text NOT NULL,
      scope text NOT NULL,
      attempts integer NOT NULL DEFAULT 1,
      first_failed_at timestamptz NOT NULL,
      failed_at timestamptz NOT NULL
    );
    CREATE INDEX embedding_failures_scope_idx ON embedding_failures (scope, failed_at);
  `.execute(db)
}
