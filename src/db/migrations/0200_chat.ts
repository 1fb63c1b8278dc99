import { sql, type Kysely } from 'kysely'

/**
 * The answer pipeline's records: sessions and their messages (stored redacted; the original only
 * encrypted), idempotency keys for POST /chat when Redis is absent, PII audit events, escalation tickets
 * with a per-tenant counter (ESC-0001...), and the question log the gap analyzer reads.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE chat_sessions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      bot_id uuid NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
      channel text NOT NULL,
      mode text NOT NULL DEFAULT 'anonymous',
      identity_enc text,
      visitor_email_enc text,
      locale text,
      chat_ended boolean NOT NULL DEFAULT false,
      awaiting text,
      read_message_id uuid,
      message_count integer NOT NULL DEFAULT 0,
      last_question text,
      last_answer_preview text,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_activity_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX chat_sessions_tenant_activity_idx ON chat_sessions (tenant_id, last_activity_at DESC, id);
    CREATE INDEX chat_sessions_tenant_created_idx ON chat_sessions (tenant_id, created_at);

    CREATE TABLE chat_messages (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      session_id uuid NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
      role text NOT NULL,
      content text NOT NULL,
      content_original_enc text,
      pii_counts jsonb,
      feedback text NOT NULL DEFAULT 'none',
      ideal_answer text,
      from_operator boolean NOT NULL DEFAULT false,
      source_documents jsonb NOT NULL DEFAULT '[]',
      sources jsonb NOT NULL DEFAULT '[]',
      tokens_used integer NOT NULL DEFAULT 0,
      debug jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX chat_messages_session_idx ON chat_messages (session_id, created_at, id);
    CREATE INDEX chat_messages_bad_idx ON chat_messages (tenant_id, created_at DESC) WHERE feedback = 'down';

    CREATE TABLE idempotency_keys (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      key text NOT NULL,
      request_hash text NOT NULL,
      status text NOT NULL,
      owner_token text,
      response jsonb,
      response_text text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, key)
    );
    CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);

    CREATE TABLE pii_events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      entity_type text NOT NULL,
      action text NOT NULL,
      direction text NOT NULL,
      count integer NOT NULL DEFAULT 1,
      session_id uuid,
      ticket_id uuid,
      actor_user_id uuid,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX pii_events_tenant_created_idx ON pii_events (tenant_id, created_at DESC);

    CREATE TABLE ticket_counters (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      last integer NOT NULL
    );

    CREATE TABLE escalation_tickets (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      ticket_number text NOT NULL,
      seq integer NOT NULL,
      session_id uuid REFERENCES chat_sessions(id) ON DELETE SET NULL,
      bot_id uuid REFERENCES bots(id) ON DELETE SET NULL,
      status text NOT NULL DEFAULT 'open',
      priority text NOT NULL,
      trigger text NOT NULL,
      primary_question text NOT NULL,
      primary_question_original_enc text,
      transcript jsonb NOT NULL DEFAULT '[]',
      user_note text,
      user_email_enc text,
      user_name text,
      user_id text,
      evidence jsonb NOT NULL DEFAULT '[]',
      resolution_text text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      resolved_at timestamptz,
      UNIQUE (tenant_id, seq)
    );
    CREATE INDEX escalation_tickets_tenant_created_idx ON escalation_tickets (tenant_id, created_at DESC);
    CREATE INDEX escalation_tickets_session_idx ON escalation_tickets (session_id, created_at DESC);

    CREATE TABLE question_log (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      bot_id uuid,
      session_id uuid,
      message_id uuid,
      question text NOT NULL,
      outcome text NOT NULL,
      trigger text,
      best_score real,
      feedback text NOT NULL DEFAULT 'none',
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX question_log_tenant_created_idx ON question_log (tenant_id, created_at DESC);
    CREATE INDEX question_log_message_idx ON question_log (message_id);
  `.execute(db)
}
