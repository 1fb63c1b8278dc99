import { sql, type Kysely } from 'kysely'

/**
 * Documents (uploaded files and crawled URL pages) and their chunks. The embedding column is pgvector's
 * `vector` (no fixed dimensions, so the model can change) when the extension is installed, else `real[]`
 * searched exactly; readers ask `features.vector` or `embeddingStorage()`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE documents (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      filename text NOT NULL,
      file_type text NOT NULL,
      status text NOT NULL DEFAULT 'processing',
      error_message text,
      source_id uuid,
      source_url text,
      title text,
      size_bytes integer NOT NULL DEFAULT 0,
      content_hash text NOT NULL,
      chunk_count integer NOT NULL DEFAULT 0,
      health_status jsonb,
      parsed_text text NOT NULL DEFAULT '',
      lang text,
      indexed_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX documents_tenant_created_idx ON documents (tenant_id, created_at DESC);
    CREATE INDEX documents_source_idx ON documents (source_id) WHERE source_id IS NOT NULL;
    -- the same file uploaded twice by one tenant is refused (409); crawled pages may repeat content
    CREATE UNIQUE INDEX documents_tenant_hash_key ON documents (tenant_id, content_hash) WHERE source_id IS NULL;

    CREATE TABLE chunks (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL,
      document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
      ordinal integer NOT NULL,
      content text NOT NULL,
      section_title text,
      heading_path text,
      source_url text,
      token_count integer NOT NULL DEFAULT 0,
      lang text NOT NULL DEFAULT 'simple',
      tsv tsvector NOT NULL,
      embedding_model text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX chunks_tenant_document_idx ON chunks (tenant_id, document_id);
    CREATE INDEX chunks_tsv_idx ON chunks USING gin (tsv);
  `.execute(db)
  await sql`
    DO $$
    BEGIN
      IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
        EXECUTE 'ALTER TABLE chunks ADD COLUMN embedding vector';
      ELSE
        EXECUTE 'ALTER TABLE chunks ADD COLUMN embedding real[]';
      END IF;
    END $$;
  `.execute(db)
  // the backfill looks for chunks still waiting for a vector
  await sql`CREATE INDEX chunks_unembedded_idx ON chunks (tenant_id) WHERE embedding IS NULL`.execute(db)
}
