import { sql, type Kysely } from 'kysely'

/**
 * The e-mail channel (src/modules/email-channel): one settings row per bot (its inbound address's local part,
 * the webhook token hashed for lookup and encrypted for display), and one row per message in or out of a
 * thread. An inbound Message-ID is unique per bot, so a provider's retry or a race of two deliveries is handled
 * once; our outgoing Message-IDs are rows too, so a reply naming one finds its session. The per-sender row is
 * locked while a bot mail is counted against the hourly cap.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE email_channels (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      bot_id uuid NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
      enabled boolean NOT NULL DEFAULT false,
      mode text NOT NULL DEFAULT 'answer',
      reply_from text,
      signature text,
      local_part text NOT NULL UNIQUE,
      token_hash text NOT NULL UNIQUE,
      token_enc text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, bot_id)
    );
  `.execute(db)
  await sql`
    CREATE TABLE email_messages (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      bot_id uuid NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
      direction text NOT NULL,
      kind text,
      message_id text NOT NULL,
      in_reply_to_id uuid,
      session_id uuid REFERENCES chat_sessions(id) ON DELETE SET NULL,
      sender_enc text,
      sender_hash text,
      subject text,
      status text NOT NULL,
      reason text,
      raw_enc text,
      attachments jsonb,
      draft_enc text,
      ticket_number text,
      created_at timestamptz NOT NULL,
      processed_at timestamptz
    );
  `.execute(db)
  await sql`CREATE UNIQUE INDEX email_messages_once ON email_messages (tenant_id, bot_id, direction, message_id)`.execute(db)
  await sql`CREATE INDEX email_messages_recent ON email_messages (tenant_id, bot_id, created_at DESC)`.execute(db)
  await sql`CREATE INDEX email_messages_session ON email_messages (tenant_id, session_id)`.execute(db)
  await sql`CREATE INDEX email_messages_sender ON email_messages (tenant_id, bot_id, sender_hash, created_at) WHERE direction = 'out'`.execute(db)
  await sql`
    CREATE TABLE email_senders (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      bot_id uuid NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
      sender_hash text NOT NULL,
      PRIMARY KEY (tenant_id, bot_id, sender_hash)
    );
  `.execute(db)
}
