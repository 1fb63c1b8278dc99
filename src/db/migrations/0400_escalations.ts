import { sql, type Kysely } from 'kysely'

/**
 * Operator workflows on top of the chat records: which ticket mails were queued (one row per ticket and
 * kind, so a notification job that runs twice queues one mail), operator replies with their mail decision
 * (pending until the grace period ends, then sent / read / no_email, decided once), and each tenant's PII
 * event retention.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE ticket_notifications (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      ticket_id uuid NOT NULL REFERENCES escalation_tickets(id) ON DELETE CASCADE,
      kind text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (ticket_id, kind)
    );

    CREATE TABLE operator_replies (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      ticket_id uuid NOT NULL REFERENCES escalation_tickets(id) ON DELETE CASCADE,
      session_id uuid REFERENCES chat_sessions(id) ON DELETE CASCADE,
      message_id uuid REFERENCES chat_messages(id) ON DELETE SET NULL,
      actor_user_id uuid,
      due_at timestamptz NOT NULL,
      mail_status text NOT NULL DEFAULT 'pending',
      decided_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX operator_replies_ticket_idx ON operator_replies (tenant_id, ticket_id, created_at);

    CREATE TABLE pii_retention_settings (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      retention_days integer NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE INDEX pii_events_created_idx ON pii_events (created_at);
    CREATE INDEX escalation_tickets_tenant_status_idx ON escalation_tickets (tenant_id, status, created_at DESC);
  `.execute(db)
}
