import { sql, type Kysely } from 'kysely'

/**
 * Knowledge profile (one row per tenant, with the fields the operator set), FAQ candidates (tombstones
 * kept so a rejected candidate is not suggested again), the per-document extraction state, and the gap
 * analyzer's gaps and runs (at most one queued or running run per tenant).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE knowledge_profiles (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      product_name text,
      topics jsonb NOT NULL DEFAULT '[]',
      glossary jsonb NOT NULL DEFAULT '[]',
      support_email text,
      support_urls jsonb NOT NULL DEFAULT '[]',
      extraction_status text NOT NULL DEFAULT 'pending',
      operator_fields jsonb NOT NULL DEFAULT '[]',
      faq_auto_approve boolean NOT NULL DEFAULT false,
      dirty_at timestamptz,
      extracted_at timestamptz,
      extraction_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX knowledge_profiles_dirty_idx ON knowledge_profiles (dirty_at) WHERE dirty_at IS NOT NULL;

    CREATE TABLE faq_candidates (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      question text NOT NULL,
      answer text NOT NULL,
      confidence real,
      source text NOT NULL,
      approved boolean NOT NULL DEFAULT false,
      state text NOT NULL DEFAULT 'active',
      question_key text NOT NULL,
      document_id uuid REFERENCES documents(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX faq_candidates_tenant_idx ON faq_candidates (tenant_id, state, created_at DESC, id);
    CREATE INDEX faq_candidates_approved_idx ON faq_candidates (tenant_id) WHERE approved AND state = 'active';
    CREATE INDEX faq_candidates_document_idx ON faq_candidates (document_id) WHERE document_id IS NOT NULL;

    CREATE TABLE knowledge_documents (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
      content_hash text NOT NULL,
      extracted_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, document_id)
    );

    CREATE TABLE gap_runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      mode text NOT NULL,
      status text NOT NULL,
      accepted_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz,
      error text,
      stats jsonb
    );
    CREATE UNIQUE INDEX gap_runs_one_open_idx ON gap_runs (tenant_id) WHERE status IN ('queued', 'running');
    CREATE INDEX gap_runs_tenant_idx ON gap_runs (tenant_id, accepted_at DESC);

    CREATE TABLE gaps (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      source text NOT NULL,
      key text NOT NULL,
      label text NOT NULL,
      coverage_score real,
      classification text NOT NULL,
      status text NOT NULL,
      dismiss_reason text,
      is_new boolean NOT NULL DEFAULT false,
      question_count integer NOT NULL DEFAULT 0,
      signal_weight real,
      example_questions jsonb NOT NULL DEFAULT '[]',
      terms jsonb NOT NULL DEFAULT '{}',
      linked_gap_id uuid REFERENCES gaps(id) ON DELETE SET NULL,
      first_seen_run_id uuid,
      last_seen_run_id uuid,
      last_question_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, source, key)
    );
    CREATE INDEX gaps_tenant_status_idx ON gaps (tenant_id, source, status);
  `.execute(db)
}
