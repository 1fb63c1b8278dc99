import { sql, type Kysely } from 'kysely'

/**
 * Support analytics. `analytics_conversations` holds one row of facts per conversation (computed by the
 * analytics job from its messages and tickets, outcome included), keyed by its start; `analytics_rollup`
 * sums them per tenant, bot, channel and bin of the start, in three grains: 15-minute slots (every IANA
 * offset is a multiple of 15 minutes, so any zone's local days are exact), hours (enough for whole-hour
 * zones, a quarter of the rows) and UTC days (the inside of a long range, whose edges come from slots). A
 * figure over a year reads hundreds to a few thousand rows, never the messages. `analytics_dirty` names conversations whose feedback changed
 * (nothing else on them moves); `analytics_state` keeps the job's watermark. `analytics_exports` are the
 * export runs and their files.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE analytics_conversations (
      session_id uuid PRIMARY KEY REFERENCES chat_sessions(id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      bot_id uuid NOT NULL,
      channel text NOT NULL,
      started_at timestamptz NOT NULL,
      slot timestamptz NOT NULL,
      last_message_at timestamptz NOT NULL,
      messages integer NOT NULL,
      questions integer NOT NULL,
      bot_up integer NOT NULL,
      bot_down integer NOT NULL,
      op_up integer NOT NULL,
      op_down integer NOT NULL,
      tokens integer NOT NULL,
      model_hist jsonb NOT NULL DEFAULT '{}',
      tickets integer NOT NULL,
      first_response_s integer,
      resolve_s integer,
      outcome text NOT NULL,
      refreshed_at timestamptz NOT NULL
    );
    CREATE INDEX analytics_conversations_started_idx ON analytics_conversations (tenant_id, started_at, session_id);
    CREATE INDEX analytics_conversations_slot_idx ON analytics_conversations (tenant_id, slot);
    CREATE INDEX analytics_conversations_recent_idx ON analytics_conversations (tenant_id, last_message_at);
    CREATE INDEX analytics_conversations_tickets_idx ON analytics_conversations (tenant_id, started_at) WHERE tickets > 0;

    CREATE TABLE analytics_rollup (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      grain text NOT NULL,
      bot_id uuid NOT NULL,
      channel text NOT NULL,
      slot timestamptz NOT NULL,
      hod integer NOT NULL,
      conversations integer NOT NULL,
      questions integer NOT NULL,
      handed_off integer NOT NULL,
      resolved_confirmed integer NOT NULL,
      resolved_assumed integer NOT NULL,
      unresolved integer NOT NULL,
      bot_up integer NOT NULL,
      bot_down integer NOT NULL,
      op_up integer NOT NULL,
      op_down integer NOT NULL,
      tokens bigint NOT NULL,
      model_hist jsonb NOT NULL DEFAULT '{}',
      PRIMARY KEY (tenant_id, grain, slot, bot_id, channel)
    );
    -- a zone off the whole hour reads the slots of the hours its midnights fall in, by UTC hour of day
    CREATE INDEX analytics_rollup_hour_idx ON analytics_rollup (tenant_id, grain, hod, slot);

    CREATE TABLE analytics_dirty (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      session_id uuid NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
      marked_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, session_id)
    );

    CREATE TABLE analytics_state (
      id integer PRIMARY KEY,
      watermark timestamptz NOT NULL
    );

    CREATE TABLE analytics_exports (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      kind text NOT NULL,
      format text NOT NULL,
      range_from text NOT NULL,
      range_to text NOT NULL,
      tz text NOT NULL,
      bot_ids jsonb,
      status text NOT NULL DEFAULT 'queued',
      progress real NOT NULL DEFAULT 0,
      rows integer NOT NULL DEFAULT 0,
      file_name text,
      error text,
      created_by uuid,
      created_at timestamptz NOT NULL,
      finished_at timestamptz,
      expires_at timestamptz
    );
    CREATE INDEX analytics_exports_tenant_idx ON analytics_exports (tenant_id, created_at DESC);
    CREATE INDEX analytics_exports_expiry_idx ON analytics_exports (expires_at) WHERE file_name IS NOT NULL;

    -- what the job and the exports find their rows by
    CREATE INDEX chat_sessions_activity_idx ON chat_sessions (last_activity_at);
    CREATE INDEX escalation_tickets_updated_idx ON escalation_tickets (updated_at);
    CREATE INDEX chat_messages_tenant_created_idx ON chat_messages (tenant_id, created_at, id);
    CREATE INDEX question_log_text_idx ON question_log (tenant_id, md5(question));
  `.execute(db)
}
