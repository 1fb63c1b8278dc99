import { sql, type Kysely } from 'kysely'

/**
 * What the visitors waiting for a person were last told about availability, per bot (online, when the team is
 * back): the sweep and a member's status change compare the present with it and send an `availability` frame
 * to the waiting visitors' streams only when it changed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE live_availability (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      bot_id uuid NOT NULL,
      online boolean NOT NULL,
      next_open_at timestamptz,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, bot_id)
    );
  `.execute(db)
}
