import { sql, type Kysely } from 'kysely'

/**
 * Languages (#40): a workspace's language settings (the knowledge's language, the languages the bot answers in,
 * the fallback), a session's language once known and where it came from, and an operator message's original
 * when it was sent translated.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE tenant_languages (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      knowledge text NOT NULL,
      answer jsonb NOT NULL DEFAULT '[]'::jsonb,
      fallback text NOT NULL,
      updated_at timestamptz NOT NULL
    );
    ALTER TABLE chat_sessions ADD COLUMN language text;
    ALTER TABLE chat_sessions ADD COLUMN language_source text;
  `.execute(db)
}
