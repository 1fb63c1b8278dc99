import { sql, type Kysely } from 'kysely'

/**
 * Outgoing mail of the e-mail channel (issue 50):
 * - `reply_from` is used as the sender only once its address is confirmed: the confirmed address, and the
 *   pending confirmation (a SHA-256 of the single-use token, the address it was mailed to, its expiry).
 * - the per-sender cap counts by a keyed hash of the normalised mailbox (`mailbox_hash` on outgoing rows), and a
 *   capped sender's mail goes into one held conversation (`email_senders.held_session_id`).
 * - every outgoing row names the session's correspondent: the operator and resolution mails recorded before
 *   with a null `sender_hash` take their session's first sender's.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE email_channels ADD COLUMN reply_from_verified text;
    ALTER TABLE email_channels ADD COLUMN verify_token_hash text;
    ALTER TABLE email_channels ADD COLUMN verify_address text;
    ALTER TABLE email_channels ADD COLUMN verify_expires_at timestamptz;
    CREATE UNIQUE INDEX email_channels_verify_token ON email_channels (verify_token_hash) WHERE verify_token_hash IS NOT NULL;
    ALTER TABLE email_messages ADD COLUMN mailbox_hash text;
    CREATE INDEX email_messages_mailbox ON email_messages (tenant_id, bot_id, mailbox_hash, created_at) WHERE direction = 'out';
    ALTER TABLE email_senders ADD COLUMN held_session_id uuid REFERENCES chat_sessions(id) ON DELETE SET NULL;
    UPDATE email_messages o SET sender_hash = (
      SELECT i.sender_hash FROM email_messages i
      WHERE i.tenant_id = o.tenant_id AND i.session_id = o.session_id AND i.direction = 'in' AND i.sender_hash IS NOT NULL
      ORDER BY i.created_at LIMIT 1
    )
    WHERE o.direction = 'out' AND o.sender_hash IS NULL AND o.session_id IS NOT NULL;
  `.execute(db)
}
