import { sql, type Kysely } from 'kysely'

/**
 * A file's stored bytes in pieces of at most 512 KB, one statement each (issue 54): the embedded database runs
 * on the event loop, and one 10 MB value written or read in one statement held it for seconds while twenty
 * uploads arrived. `attachments.chunks` says how many pieces a file has; 0 is a file stored whole in `data`
 * (before this migration). The pieces go with their file (ON DELETE CASCADE): its session, its workspace, retention.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE attachments ADD COLUMN chunks integer NOT NULL DEFAULT 0 CHECK (chunks >= 0);
    CREATE TABLE attachment_chunks (
      attachment_id uuid NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      seq integer NOT NULL CHECK (seq >= 0),
      data bytea NOT NULL,
      PRIMARY KEY (attachment_id, seq)
    );
    ALTER TABLE attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
  `.execute(db)
}
