import { sql, type Kysely } from 'kysely'

/**
 * The fingerprint of the ENCRYPTION_KEY this database's secrets are written with (an HMAC of a constant under
 * the key, never the key): an instance started with another key is refused in production, warned about
 * loudly elsewhere (src/lib/key-fingerprint.ts), instead of failing every job the other one enqueued.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE encryption_key_fingerprint (
      id integer PRIMARY KEY CHECK (id = 1),
      fingerprint text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS encryption_key_fingerprint`.execute(db)
}
