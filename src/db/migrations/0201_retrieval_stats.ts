import { sql, type Kysely } from 'kysely'

/**
 * Corpus statistics for BM25, kept exact by statement-level triggers on `chunks` (whoever writes chunks,
 * the stats follow): per tenant and lexeme the number of chunks containing it (df), and per tenant the
 * chunk count, total length, the text-search configurations in use, how many chunks have an embedding,
 * and a version that changes with every write (in-process caches key on it).
 *
 * A per-tenant advisory lock taken first serialises concurrent writers of one tenant, so the upserts of
 * overlapping term rows cannot deadlock. Rows whose df falls to 0 stay (they read as absent).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE lexical_terms (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      term text NOT NULL,
      df integer NOT NULL,
      PRIMARY KEY (tenant_id, term)
    );

    CREATE TABLE lexical_corpus (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      n_chunks integer NOT NULL DEFAULT 0,
      total_len bigint NOT NULL DEFAULT 0,
      langs text[] NOT NULL DEFAULT '{}',
      n_embedded integer NOT NULL DEFAULT 0,
      version bigint NOT NULL DEFAULT 0
    );

    CREATE FUNCTION lexical_lock(tenants uuid[]) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE t uuid;
    BEGIN
      -- array_agg over no rows is NULL and FOREACH refuses NULL: statements touching no chunk must pass.
      FOREACH t IN ARRAY coalesce((SELECT array_agg(DISTINCT x ORDER BY x) FROM unnest(tenants) x), '{}'::uuid[]) LOOP
        PERFORM pg_advisory_xact_lock(hashtext('lexical_stats'), hashtext(t::text));
      END LOOP;
    END $$;

    CREATE FUNCTION lexical_chunks_ins() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM lexical_lock(ARRAY(SELECT DISTINCT tenant_id FROM new_rows));
      INSERT INTO lexical_terms AS s (tenant_id, term, df)
        SELECT n.tenant_id, u.lexeme, count(*)::int FROM new_rows n, unnest(n.tsv) u GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (tenant_id, term) DO UPDATE SET df = s.df + EXCLUDED.df;
      INSERT INTO lexical_corpus AS c (tenant_id, n_chunks, total_len, langs, n_embedded, version)
        SELECT n.tenant_id, count(*)::int, sum(greatest(n.token_count, 1)), array_agg(DISTINCT n.lang), count(n.embedding)::int, 1
        FROM new_rows n GROUP BY 1 ORDER BY 1
      ON CONFLICT (tenant_id) DO UPDATE SET
        n_chunks = c.n_chunks + EXCLUDED.n_chunks,
        total_len = c.total_len + EXCLUDED.total_len,
        langs = ARRAY(SELECT DISTINCT l FROM unnest(c.langs || EXCLUDED.langs) l ORDER BY l),
        n_embedded = c.n_embedded + EXCLUDED.n_embedded,
        version = c.version + 1;
      RETURN NULL;
    END $$;

    CREATE FUNCTION lexical_chunks_del() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM lexical_lock(ARRAY(SELECT DISTINCT tenant_id FROM old_rows));
      UPDATE lexical_terms s SET df = s.df - d.cnt
        FROM (SELECT o.tenant_id, u.lexeme AS term, count(*)::int AS cnt FROM old_rows o, unnest(o.tsv) u GROUP BY 1, 2 ORDER BY 1, 2) d
        WHERE s.tenant_id = d.tenant_id AND s.term = d.term;
      UPDATE lexical_corpus c SET
        n_chunks = greatest(c.n_chunks - d.n, 0),
        total_len = greatest(c.total_len - d.len, 0),
        n_embedded = greatest(c.n_embedded - d.emb, 0),
        version = c.version + 1
        FROM (SELECT tenant_id, count(*)::int AS n, sum(greatest(token_count, 1)) AS len, count(embedding)::int AS emb FROM old_rows GROUP BY 1) d
        WHERE c.tenant_id = d.tenant_id;
      RETURN NULL;
    END $$;

    -- An update counts as delete + insert for the rows whose text changed; any update bumps the version
    -- (an embedding written later must reach the vector caches).
    CREATE FUNCTION lexical_chunks_upd() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM lexical_lock(ARRAY(SELECT DISTINCT tenant_id FROM new_rows UNION SELECT DISTINCT tenant_id FROM old_rows));
      UPDATE lexical_terms s SET df = s.df - d.cnt
        FROM (
          SELECT o.tenant_id, u.lexeme AS term, count(*)::int AS cnt
          FROM old_rows o JOIN new_rows n ON n.id = o.id, unnest(o.tsv) u
          WHERE o.tsv IS DISTINCT FROM n.tsv GROUP BY 1, 2 ORDER BY 1, 2
        ) d
        WHERE s.tenant_id = d.tenant_id AND s.term = d.term;
      INSERT INTO lexical_terms AS s (tenant_id, term, df)
        SELECT n.tenant_id, u.lexeme, count(*)::int
        FROM old_rows o JOIN new_rows n ON n.id = o.id, unnest(n.tsv) u
        WHERE o.tsv IS DISTINCT FROM n.tsv GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (tenant_id, term) DO UPDATE SET df = s.df + EXCLUDED.df;
      UPDATE lexical_corpus c SET
        total_len = greatest(c.total_len + d.len, 0),
        n_embedded = greatest(c.n_embedded + d.emb, 0),
        langs = ARRAY(SELECT DISTINCT l FROM unnest(c.langs || d.langs) l ORDER BY l),
        version = c.version + 1
        FROM (
          SELECT n.tenant_id,
                 sum(greatest(n.token_count, 1) - greatest(o.token_count, 1)) AS len,
                 (count(n.embedding) - count(o.embedding))::int AS emb,
                 array_agg(DISTINCT n.lang) AS langs
          FROM old_rows o JOIN new_rows n ON n.id = o.id GROUP BY 1
        ) d
        WHERE c.tenant_id = d.tenant_id;
      RETURN NULL;
    END $$;

    CREATE TRIGGER chunks_lexical_ins AFTER INSERT ON chunks REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION lexical_chunks_ins();
    CREATE TRIGGER chunks_lexical_del AFTER DELETE ON chunks REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION lexical_chunks_del();
    CREATE TRIGGER chunks_lexical_upd AFTER UPDATE ON chunks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION lexical_chunks_upd();

    -- chunks written before this migration
    INSERT INTO lexical_terms (tenant_id, term, df)
      SELECT c.tenant_id, u.lexeme, count(*)::int FROM chunks c, unnest(c.tsv) u
      WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = c.tenant_id) GROUP BY 1, 2;
    INSERT INTO lexical_corpus (tenant_id, n_chunks, total_len, langs, n_embedded, version)
      SELECT c.tenant_id, count(*)::int, sum(greatest(c.token_count, 1)), array_agg(DISTINCT c.lang), count(c.embedding)::int, 1
      FROM chunks c WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = c.tenant_id) GROUP BY 1;
  `.execute(db)
}
