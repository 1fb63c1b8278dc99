import { sql, type Kysely } from 'kysely'

/**
 * Attachments (issue 54): a visitor's file, stored in the database (bytea, AES-GCM under a key derived from
 * ENCRYPTION_KEY), so every process of a cluster and both databases read the same file without a shared disk.
 * `message_id` is set when a message takes it (at most once); its text (documents: the parsers' text, redacted) is
 * what the turn gives the model. The rows go with their session (ON DELETE CASCADE) and by retention.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE attachments (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      bot_id uuid NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
      session_id uuid NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
      message_id uuid,
      name text NOT NULL,
      content_type text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('image', 'document')),
      size integer NOT NULL CHECK (size >= 0),
      data bytea NOT NULL,
      text text,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX attachments_session_idx ON attachments (tenant_id, session_id, created_at);
    CREATE INDEX attachments_message_idx ON attachments (tenant_id, message_id) WHERE message_id IS NOT NULL;
    CREATE INDEX attachments_created_idx ON attachments (created_at);
  `.execute(db)
}
