import { sql, type Kysely } from 'kysely'

/**
 * Finding a visitor by e-mail (#39): addresses are stored encrypted, so tickets and sessions get a keyed hash
 * of the address (HMAC-SHA256 under a key derived from ENCRYPTION_KEY, src/lib/crypto.ts emailHash) that an
 * exact search compares. The key is not in the database, so the rows written before this migration are
 * hashed by the application at start (escalations/email-hash.backfill.ts), not here.
 * - the conversation list's search reads the messages' words through an expression index (full-text, not ILIKE).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE escalation_tickets ADD COLUMN user_email_hash text;
    ALTER TABLE chat_sessions ADD COLUMN visitor_email_hash text;
    CREATE INDEX escalation_tickets_email_hash_idx ON escalation_tickets (tenant_id, user_email_hash) WHERE user_email_hash IS NOT NULL;
    CREATE INDEX chat_sessions_email_hash_idx ON chat_sessions (tenant_id, visitor_email_hash) WHERE visitor_email_hash IS NOT NULL;
    CREATE INDEX chat_messages_search_idx ON chat_messages USING gin (to_tsvector('simple'::regconfig, content));
  `.execute(db)
}
