import { sql, type Kysely } from 'kysely'

/**
 * Knowledge connectors (#53): a source is a crawled site (`kind = 'url'`) or a help centre read through its
 * API (zendesk, intercom, freshdesk, github). A connector keeps its non-secret settings in
 * `connector_config`, its token encrypted (`secret_enc`, shown only as `secret_hint`) and its last sync's
 * counts in `last_sync`. Several connectors may read one API host (two GitHub repositories, two locales of one
 * Zendesk), so the one-source-per-address rule stays for crawled sites only. A page's `locale` is the
 * article's language (Zendesk translations are separate documents), read by the indexer for its stemming.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE url_sources ADD COLUMN kind text NOT NULL DEFAULT 'url';
    ALTER TABLE url_sources ADD COLUMN connector_config jsonb;
    ALTER TABLE url_sources ADD COLUMN secret_enc text;
    ALTER TABLE url_sources ADD COLUMN secret_hint text;
    ALTER TABLE url_sources ADD COLUMN last_sync jsonb;
    DROP INDEX url_sources_tenant_url_key;
    CREATE UNIQUE INDEX url_sources_tenant_url_key ON url_sources (tenant_id, url) WHERE kind = 'url';
    ALTER TABLE documents ADD COLUMN locale text;
  `.execute(db)
}
