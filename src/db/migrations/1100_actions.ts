import { sql, type Kysely } from 'kysely'

/**
 * Actions: the workspace's own HTTP APIs the bot may call for a verified visitor. An action's secret values
 * are one encrypted JSON object (only their last four characters are kept in clear, for the masks). Each call
 * is logged with redacted arguments; a write waits as `pending` for the visitor's approval, and the one
 * statement that moves it to `running` is what makes it run at most once. The workspace's action secret signs
 * every outbound call (Standard Webhooks) and the visitor token.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE actions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      method text NOT NULL,
      url text NOT NULL,
      headers jsonb NOT NULL DEFAULT '{}'::jsonb,
      body_template text,
      parameters jsonb NOT NULL DEFAULT '[]'::jsonb,
      kind text NOT NULL DEFAULT 'read',
      bot_ids jsonb,
      enabled boolean NOT NULL DEFAULT false,
      response_fields jsonb NOT NULL DEFAULT '[]'::jsonb,
      timeout_ms integer NOT NULL DEFAULT 10000,
      secrets_enc text,
      secret_hints jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE UNIQUE INDEX actions_tenant_name_idx ON actions (tenant_id, name);

    CREATE TABLE action_calls (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigserial NOT NULL,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      action_id uuid NOT NULL REFERENCES actions(id) ON DELETE CASCADE,
      session_id uuid,
      bot_id uuid,
      status text NOT NULL,
      http_status integer,
      latency_ms integer,
      arguments jsonb NOT NULL DEFAULT '{}'::jsonb,
      arguments_enc text,
      summary text NOT NULL DEFAULT '',
      response_excerpt text,
      error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE UNIQUE INDEX action_calls_seq_idx ON action_calls (seq);
    CREATE INDEX action_calls_action_idx ON action_calls (tenant_id, action_id, seq DESC);

    CREATE TABLE action_settings (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      secret_enc text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
  `.execute(db)
}
