import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE users (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      email text NOT NULL,
      password_hash text NOT NULL,
      is_verified boolean NOT NULL DEFAULT false,
      tenant_id uuid,
      token_version integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX users_email_key ON users (lower(email));

    CREATE TABLE tenants (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      owner_user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      is_active boolean NOT NULL DEFAULT true,
      llm_key_enc text,
      llm_key_hint text,
      support_email text,
      kyc_secret_enc text,
      kyc_secret_hint text,
      kyc_prev_secret_enc text,
      kyc_prev_valid_until timestamptz,
      pii_optional_types jsonb NOT NULL DEFAULT '["ID_DOC","IP","URL_TOKEN"]',
      l2_email text,
      escalation_language text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    ALTER TABLE users ADD CONSTRAINT users_tenant_fk FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE SET NULL;

    CREATE TABLE auth_tokens (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      purpose text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX auth_tokens_user_idx ON auth_tokens (user_id, purpose);

    CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      key_hash text NOT NULL UNIQUE,
      key_hint text NOT NULL,
      status text NOT NULL DEFAULT 'active',
      revoked_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz
    );
    CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at DESC);

    CREATE TABLE bots (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      public_id text NOT NULL UNIQUE,
      is_active boolean NOT NULL DEFAULT true,
      link_safety_enabled boolean NOT NULL DEFAULT false,
      allowed_domains jsonb NOT NULL DEFAULT '[]',
      agent_instructions text,
      website_url text,
      disclosure_level text NOT NULL DEFAULT 'standard',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX bots_tenant_idx ON bots (tenant_id, created_at);

    CREATE TABLE jobs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      kind text NOT NULL,
      payload jsonb NOT NULL DEFAULT '{}',
      tenant_id uuid REFERENCES tenants(id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'queued',
      attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL DEFAULT 5,
      run_at timestamptz NOT NULL DEFAULT now(),
      locked_by text,
      locked_until timestamptz,
      last_error text,
      dedupe_key text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    );
    CREATE INDEX jobs_ready_idx ON jobs (run_at) WHERE status IN ('queued', 'running');
    -- one live job per dedupe key; finished jobs no longer block a new one
    CREATE UNIQUE INDEX jobs_dedupe_idx ON jobs (dedupe_key) WHERE dedupe_key IS NOT NULL AND status IN ('queued', 'running');
  `.execute(db)
}
