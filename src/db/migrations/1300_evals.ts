import { sql, type Kysely } from 'kysely'

/**
 * Evaluations: a workspace's own test questions (cases), runs of them through the turn pipeline as dry runs,
 * and one result per case of a run. At most one queued or running run per workspace: the partial unique index
 * is what makes a second start a 409 even when two arrive together.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE eval_cases (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      bot_id uuid,
      question text NOT NULL,
      turns jsonb,
      visitor_claims jsonb,
      expect jsonb NOT NULL,
      tags jsonb NOT NULL DEFAULT '[]'::jsonb,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX eval_cases_tenant_idx ON eval_cases (tenant_id, created_at);

    CREATE TABLE eval_runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      bot_id uuid,
      tags jsonb,
      repeat integer NOT NULL DEFAULT 1,
      status text NOT NULL DEFAULT 'queued',
      progress real NOT NULL DEFAULT 0,
      partial boolean NOT NULL DEFAULT false,
      pins jsonb,
      totals jsonb NOT NULL DEFAULT '{"cases":0,"passed":0,"failed":0,"flaky":0}'::jsonb,
      tokens integer NOT NULL DEFAULT 0,
      error text,
      created_by uuid,
      created_at timestamptz NOT NULL,
      finished_at timestamptz
    );
    CREATE INDEX eval_runs_tenant_idx ON eval_runs (tenant_id, created_at DESC);
    CREATE UNIQUE INDEX eval_runs_one_active_idx ON eval_runs (tenant_id) WHERE status IN ('queued', 'running');

    CREATE TABLE eval_results (
      run_id uuid NOT NULL REFERENCES eval_runs(id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      case_id uuid NOT NULL,
      position integer NOT NULL,
      result jsonb NOT NULL,
      PRIMARY KEY (run_id, case_id)
    );
  `.execute(db)
}
