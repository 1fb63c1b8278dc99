import { sql, type Kysely } from 'kysely'

/**
 * Automatic evaluation runs: a workspace switch (`evals_auto_run`) and, on each run, what started it, so the
 * "at most one an hour" rule reads the last automatic run instead of a separate clock.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE tenants ADD COLUMN evals_auto_run boolean NOT NULL DEFAULT false;
    ALTER TABLE eval_runs ADD COLUMN trigger text NOT NULL DEFAULT 'manual';
    CREATE INDEX eval_runs_auto_idx ON eval_runs (tenant_id, created_at DESC) WHERE trigger = 'auto';
  `.execute(db)
}
