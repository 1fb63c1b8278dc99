import { sql, type Kysely } from 'kysely'

/**
 * The team workspace: a user's membership (role, the bots it is limited to, whether an agent may show
 * originals, its assignment-mail preference, when it was last active) stays on the user row, as a user
 * belongs to one workspace; every existing account becomes its workspace's owner by the column default,
 * nothing else changes. Invitations keep only a token hash; expiry is derived from expires_at. Tickets gain
 * an assignee and their first response time. The audit log is append-only (an update is refused by a
 * trigger; only the retention sweep deletes) and indexed for its filters, newest first.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE users
      ADD COLUMN role text NOT NULL DEFAULT 'owner',
      ADD COLUMN bot_ids jsonb,
      ADD COLUMN can_view_original boolean NOT NULL DEFAULT false,
      ADD COLUMN notify_on_assignment boolean NOT NULL DEFAULT true,
      ADD COLUMN last_active_at timestamptz;
    CREATE INDEX users_tenant_idx ON users (tenant_id) WHERE tenant_id IS NOT NULL;

    CREATE TABLE invitations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      email text NOT NULL,
      role text NOT NULL,
      bot_ids jsonb,
      can_view_original boolean NOT NULL DEFAULT false,
      token_hash text NOT NULL UNIQUE,
      status text NOT NULL DEFAULT 'pending',
      invited_by_user_id uuid REFERENCES users(id) ON DELETE SET NULL,
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz,
      revoked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX invitations_tenant_idx ON invitations (tenant_id, created_at DESC);
    CREATE UNIQUE INDEX invitations_one_pending_idx ON invitations (tenant_id, email) WHERE status = 'pending';

    ALTER TABLE escalation_tickets
      ADD COLUMN assignee_user_id uuid REFERENCES users(id) ON DELETE SET NULL,
      ADD COLUMN first_response_at timestamptz;
    CREATE INDEX escalation_tickets_assignee_idx ON escalation_tickets (tenant_id, assignee_user_id, created_at DESC);

    CREATE TABLE audit_log (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      at timestamptz NOT NULL,
      actor_user_id uuid,
      actor_email text,
      ip text,
      action text NOT NULL,
      item_type text NOT NULL,
      item_id text,
      detail jsonb NOT NULL DEFAULT '{}'
    );
    CREATE INDEX audit_log_tenant_idx ON audit_log (tenant_id, at DESC, id DESC);
    CREATE INDEX audit_log_actor_idx ON audit_log (tenant_id, actor_user_id, at DESC, id DESC);
    CREATE INDEX audit_log_action_idx ON audit_log (tenant_id, action, at DESC, id DESC);
    CREATE INDEX audit_log_at_idx ON audit_log (at);

    CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit_log is append-only';
    END $$;
    CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
  `.execute(db)
}
