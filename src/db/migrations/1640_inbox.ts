import { sql, type Kysely } from 'kysely'

/**
 * The inbox an agent lives in (#39):
 * - visitor presence: when the visitor was last seen (an open widget stream refreshes it, a message counts
 *   too) and whether they have gone, on the session and on its ticket (the queue and auto-assignment skip it);
 * - saved replies, a shortcut unique per workspace;
 * - full-text search over tickets (number, question, note, transcript) through an expression index, so a
 *   search reads the index instead of scanning every transcript with ILIKE.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE chat_sessions
      ADD COLUMN visitor_seen_at timestamptz,
      ADD COLUMN visitor_gone boolean NOT NULL DEFAULT false;
    ALTER TABLE escalation_tickets
      ADD COLUMN visitor_gone boolean NOT NULL DEFAULT false,
      ADD COLUMN visitor_gone_at timestamptz;
    CREATE INDEX chat_sessions_waiting_idx ON chat_sessions (owner, visitor_gone) WHERE owner IN ('queue', 'human');
    CREATE TABLE saved_replies (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      title text NOT NULL,
      content text NOT NULL,
      shortcut text NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (tenant_id, shortcut)
    );
    CREATE INDEX escalation_tickets_search_idx ON escalation_tickets USING gin (
      to_tsvector('simple'::regconfig, coalesce(primary_question, '') || ' ' || coalesce(user_note, '') || ' '
        || coalesce(jsonb_path_query_array(transcript, '$[*].content')::text, ''))
    );
  `.execute(db)
}
