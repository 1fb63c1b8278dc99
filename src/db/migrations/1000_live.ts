import { sql, type Kysely } from 'kysely'

/**
 * Live conversation: a session has one owner at a time (bot, queue, human, closed). `chat_ended` becomes the
 * stored form of `closed` (the only owner that refuses a visitor's message); the API presents chat_ended as
 * "owner is not bot". Existing data: an ended chat is closed, a chat with a ticket still open waits in the
 * queue (or is a person's when the ticket has an assignee).
 *
 * `live_events` is the source of truth of both event streams: a per-tenant `seq` (the team's stream) and a
 * per-session `session_seq` (the widget's), each taken under a row lock held to commit (the tenant's counter
 * row, the session row), so rows commit in sequence order and a reader that reads "after my last seq" misses
 * none. Internal notes live in `conversation_notes`, apart from chat_messages, so nothing that reads a
 * conversation's messages (history, the bot's context, transcripts, exports) can show one to a visitor.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE chat_sessions
      ADD COLUMN owner text NOT NULL DEFAULT 'bot' CHECK (owner IN ('bot', 'queue', 'human', 'closed')),
      ADD COLUMN owner_since timestamptz,
      ADD COLUMN live_seq bigint NOT NULL DEFAULT 0;
    UPDATE chat_sessions SET owner = 'closed', owner_since = last_activity_at WHERE chat_ended;
    UPDATE chat_sessions s SET owner = CASE WHEN t.assignee_user_id IS NULL THEN 'queue' ELSE 'human' END, owner_since = t.created_at
      FROM escalation_tickets t
      WHERE t.session_id = s.id AND t.tenant_id = s.tenant_id AND t.status IN ('open', 'in_progress') AND NOT s.chat_ended;
    CREATE INDEX chat_sessions_person_idx ON chat_sessions (tenant_id, owner, owner_since) WHERE owner IN ('queue', 'human');

    ALTER TABLE chat_messages ADD COLUMN author_user_id uuid;

    CREATE TABLE conversation_notes (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      session_id uuid NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
      ticket_id uuid,
      author_user_id uuid,
      content text NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX conversation_notes_session_idx ON conversation_notes (tenant_id, session_id, created_at);

    CREATE TABLE live_counters (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      last bigint NOT NULL
    );

    CREATE TABLE live_events (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      seq bigint NOT NULL,
      session_id uuid REFERENCES chat_sessions(id) ON DELETE CASCADE,
      session_seq bigint,
      bot_id uuid,
      type text NOT NULL,
      internal boolean NOT NULL DEFAULT false,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, seq)
    );
    CREATE UNIQUE INDEX live_events_session_idx ON live_events (session_id, session_seq) WHERE session_id IS NOT NULL;
    CREATE INDEX live_events_created_idx ON live_events (created_at);

    ALTER TABLE users
      ADD COLUMN display_name text,
      ADD COLUMN live_status text NOT NULL DEFAULT 'offline' CHECK (live_status IN ('online', 'away', 'offline')),
      ADD COLUMN live_status_at timestamptz;

    ALTER TABLE tenants
      ADD COLUMN office_hours jsonb,
      ADD COLUMN auto_assign boolean NOT NULL DEFAULT false,
      ADD COLUMN agent_capacity integer NOT NULL DEFAULT 3;
  `.execute(db)
}
