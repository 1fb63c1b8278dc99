import { sql, type Kysely } from 'kysely'

/**
 * Outbound webhooks: endpoints (signing secret encrypted; the previous one kept for 24 h after a rotation),
 * the events outbox (written in the transaction of the change that caused it), one delivery per event and
 * endpoint, and each delivery's attempts. `seq` orders deliveries by creation, so the events of one ticket
 * reach an endpoint in order. Finished deliveries and their events are swept after 30 days.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE webhook_endpoints (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      url text NOT NULL,
      description text NOT NULL DEFAULT '',
      events jsonb NOT NULL,
      bot_ids jsonb,
      kind text NOT NULL DEFAULT 'standard',
      enabled boolean NOT NULL DEFAULT true,
      disabled_reason text,
      secret_enc text NOT NULL,
      previous_secret_enc text,
      previous_secret_until timestamptz,
      failing_since timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX webhook_endpoints_tenant_idx ON webhook_endpoints (tenant_id, created_at);

    CREATE TABLE webhook_events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      type text NOT NULL,
      bot_id uuid,
      ticket_id uuid,
      body text NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX webhook_events_created_idx ON webhook_events (created_at);

    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigserial NOT NULL,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
      event_id uuid NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
      type text NOT NULL,
      ticket_id uuid,
      status text NOT NULL DEFAULT 'pending',
      attempts integer NOT NULL DEFAULT 0,
      retry_step integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      locked_until timestamptz,
      last_status_code integer,
      last_latency_ms integer,
      last_error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      finished_at timestamptz
    );
    CREATE UNIQUE INDEX webhook_deliveries_seq_idx ON webhook_deliveries (seq);
    CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (tenant_id, endpoint_id, seq DESC);
    CREATE INDEX webhook_deliveries_ticket_idx ON webhook_deliveries (ticket_id, endpoint_id, seq) WHERE status = 'pending' AND ticket_id IS NOT NULL;
    CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (finished_at) WHERE status <> 'pending';

    CREATE TABLE webhook_attempts (
      id bigserial PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      attempted_at timestamptz NOT NULL,
      status_code integer,
      latency_ms integer NOT NULL,
      response_excerpt text,
      error text,
      next_attempt_at timestamptz
    );
    CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id);
  `.execute(db)
}
