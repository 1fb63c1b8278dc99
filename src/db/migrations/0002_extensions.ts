import { sql, type Kysely } from 'kysely'

/**
 * pgvector when the server has it (PGlite ships it; Debian's PostgreSQL may not). Code that uses vectors
 * asks `features.vector` and falls back to exact search over plain arrays otherwise.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    DO $$
    BEGIN
      IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
        BEGIN
          CREATE EXTENSION IF NOT EXISTS vector;
        EXCEPTION WHEN others THEN
          RAISE NOTICE 'pgvector not installed: %', SQLERRM;
        END;
      END IF;
    END $$;
  `.execute(db)
}
