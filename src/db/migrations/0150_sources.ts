import { sql, type Kysely } from 'kysely'

/**
 * URL sources, their crawl runs, each run's persisted frontier (crawl_queue) and the pages a source owns
 * (source_pages: validators for conditional requests, content hash, owner exclusions). A crawled page is
 * a `documents` row whose source_id points here, so deleting a source removes its pages and chunks.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE url_sources (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      url text NOT NULL,
      status text NOT NULL DEFAULT 'queued',
      paused boolean NOT NULL DEFAULT false,
      schedule text NOT NULL DEFAULT 'weekly',
      exclusion_patterns jsonb NOT NULL DEFAULT '[]',
      max_pages integer NOT NULL DEFAULT 200,
      last_crawled_at timestamptz,
      next_crawl_at timestamptz,
      refresh_requested_at timestamptz,
      pending_trigger text NOT NULL DEFAULT 'initial',
      error_message text,
      warning_message text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX url_sources_tenant_idx ON url_sources (tenant_id, created_at DESC);
    CREATE UNIQUE INDEX url_sources_tenant_url_key ON url_sources (tenant_id, url);
    CREATE INDEX url_sources_due_idx ON url_sources (next_crawl_at) WHERE next_crawl_at IS NOT NULL AND paused = false;

    ALTER TABLE documents ADD CONSTRAINT documents_source_fk FOREIGN KEY (source_id) REFERENCES url_sources(id) ON DELETE CASCADE;

    CREATE TABLE crawl_runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      source_id uuid NOT NULL REFERENCES url_sources(id) ON DELETE CASCADE,
      trigger text NOT NULL,
      status text NOT NULL DEFAULT 'running',
      site text NOT NULL,
      sitemap_done boolean NOT NULL DEFAULT false,
      pages_found integer NOT NULL DEFAULT 0,
      pages_indexed integer NOT NULL DEFAULT 0,
      pages_unchanged integer NOT NULL DEFAULT 0,
      pages_removed integer NOT NULL DEFAULT 0,
      cap_reached boolean NOT NULL DEFAULT false,
      failed_urls jsonb NOT NULL DEFAULT '[]',
      error_message text,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    );
    CREATE INDEX crawl_runs_source_idx ON crawl_runs (source_id, created_at DESC);
    -- one crawl of a source at a time, whatever happens to the jobs
    CREATE UNIQUE INDEX crawl_runs_one_running_key ON crawl_runs (source_id) WHERE status = 'running';

    CREATE TABLE crawl_queue (
      run_id uuid NOT NULL REFERENCES crawl_runs(id) ON DELETE CASCADE,
      url text NOT NULL,
      depth integer NOT NULL,
      seq bigserial NOT NULL,
      state text NOT NULL DEFAULT 'pending',
      reason text,
      PRIMARY KEY (run_id, url)
    );
    CREATE INDEX crawl_queue_pending_idx ON crawl_queue (run_id, depth, seq) WHERE state = 'pending';

    CREATE TABLE source_pages (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      source_id uuid NOT NULL REFERENCES url_sources(id) ON DELETE CASCADE,
      url text NOT NULL,
      document_id uuid REFERENCES documents(id) ON DELETE SET NULL,
      etag text,
      last_modified text,
      content_hash text,
      excluded boolean NOT NULL DEFAULT false,
      last_status integer,
      last_seen_run_id uuid,
      -- the page's same-site links, so a 304 Not Modified still leads the crawl on
      links jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (source_id, url)
    );
    CREATE INDEX source_pages_document_idx ON source_pages (document_id) WHERE document_id IS NOT NULL;
  `.execute(db)
}
