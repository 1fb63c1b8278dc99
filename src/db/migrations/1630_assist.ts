import { sql, type Kysely } from 'kysely'

/**
 * Operator assist (issue 39): every suggested reply and every conversation summary the model wrote for a
 * person on a ticket, one row each. A suggestion is marked used when a message posted with its id; a summary
 * is the cache of its ticket until a newer message arrives (message_count and based_on_message_id differ).
 * The rows go with their ticket and their conversation (erasure, retention).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE assist_drafts (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('suggestion', 'summary')),
      ticket_id uuid NOT NULL REFERENCES escalation_tickets(id) ON DELETE CASCADE,
      session_id uuid NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
      bot_id uuid,
      user_id uuid,
      text text NOT NULL,
      language text NOT NULL,
      cited jsonb NOT NULL DEFAULT '[]'::jsonb,
      based_on_message_id uuid,
      message_count integer NOT NULL,
      instruction text,
      tokens integer NOT NULL DEFAULT 0,
      model_ms integer,
      used_at timestamptz,
      used_message_id uuid,
      used_unedited boolean,
      stale boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX assist_drafts_ticket_idx ON assist_drafts (tenant_id, ticket_id, kind, created_at DESC);
    CREATE INDEX assist_drafts_tenant_time_idx ON assist_drafts (tenant_id, created_at);
  `.execute(db)
}
