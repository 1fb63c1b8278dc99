import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import { PREPARED } from '../../db/prepared.js'
import { orQuery, type Bm25Params, type ConfigTermStat, type QueryPlan } from './bm25.fns.js'
import type { TermVectorRow } from './lexical-cache.js'
import type { VectorIndexSpec } from './vector-index.fns.js'

export interface CorpusRow {
  n: number
  totalLen: number
  nEmbedded: number
  version: number
}

export interface ScoredChunk {
  id: string
  document_id: string
  score: number
}

export interface ChunkDetail {
  id: string
  document_id: string
  content: string
  section_title: string | null
  heading_path: string | null
  source_url: string | null
  doc_title: string | null
  filename: string
  doc_url: string | null
}

/** pgvector's text form of a vector. */
const vectorLiteral = (v: ArrayLike<number>) => `[${Array.from(v).join(',')}]`

/** node-postgres reads pgvector as text "[...]" and real[] as number[]; PGlite gives number[] for both. */
export function parseEmbedding(value: unknown): number[] | null {
  if (value == null) return null
  if (Array.isArray(value)) return value as number[]
  if (typeof value === 'string') {
    const s = value.trim().replace(/^[[{]|[\]}]$/g, '')
    return s ? s.split(',').map(Number) : []
  }
  return null
}

export function createRetrievalRepo(db: Db, features: { vector: boolean }) {
  return {
    /**
     * The tenant's corpus statistics and, for every lexeme of the query under each text-search
     * configuration the tenant's chunks use, its document frequency (the caller picks one configuration's
     * lexemes, see chooseQueryTerms). One round trip; null corpus when the tenant has no chunks at all.
     * Each lexeme's df is a subquery, one index probe per lexeme: as a join, the planner guessed 100 (configuration,
     * lexeme) pairs and hash-joined them against every one of the tenant's lexical_terms rows (14,600 rows for
     * 1,000 chunks: 2.8 ms of PostgreSQL per turn instead of 0.2 ms, growing with the vocabulary).
     */
    /**
     * The tenant's corpus statistics and the query's lexemes with their document frequencies, under each text-search
     * configuration the tenant's chunks use. Lexemes only `alternates` yields (other wordings, ui-words.fns.ts) are
     * marked `alt`.
     */
    async corpusAndTerms(tenantId: string, query: string, alternates = ''): Promise<{ corpus: CorpusRow | null; terms: ConfigTermStat[] }> {
      const { rows } = await sql<{
        n_chunks: number
        total_len: number
        n_embedded: number
        version: number
        terms: { c: string; t: string; df: number; a: boolean }[] | null
      }>`${PREPARED}
        SELECT c.n_chunks, c.total_len, c.n_embedded, c.version,
          (SELECT json_agg(json_build_object('c', q.cfg, 't', q.term, 'a', q.alt, 'df',
                    coalesce((SELECT s.df FROM lexical_terms s WHERE s.tenant_id = c.tenant_id AND s.term = q.term), 0)))
             FROM (SELECT cfg, u.lexeme AS term, bool_and(u.alt) AS alt
                     FROM unnest(c.langs) cfg,
                          LATERAL (SELECT lexeme, false AS alt FROM unnest(to_tsvector(cfg::regconfig, ${query}))
                                   UNION ALL
                                   SELECT lexeme, true FROM unnest(to_tsvector(cfg::regconfig, ${alternates}))) u
                    GROUP BY cfg, u.lexeme) q) AS terms
        FROM lexical_corpus c WHERE c.tenant_id = ${tenantId}
      `.execute(db)
      const r = rows[0]
      if (!r || r.n_chunks <= 0) return { corpus: null, terms: [] }
      return {
        corpus: { n: Number(r.n_chunks), totalLen: Number(r.total_len), nEmbedded: Number(r.n_embedded), version: Number(r.version) },
        terms: (r.terms ?? []).map((x) => ({ cfg: x.c, term: x.t, df: Number(x.df), ...(x.a ? { alt: true } : {}) })),
      }
    },

    /**
     * The tenant's lexemes that could be a slip away from `unknown` ones: the same first letter (or the second,
     * for a slip at the start) and a length within two. The spelling correction picks among them.
     */
    async termsNear(tenantId: string, unknown: string[]): Promise<[string, number][]> {
      if (unknown.length === 0) return []
      const firsts = [...new Set(unknown.flatMap((u) => [u.slice(0, 1), u.slice(1, 2)]))]
      const lens = unknown.map((u) => u.length)
      const { rows } = await sql<{ term: string; df: number }>`
        SELECT term, df FROM lexical_terms
        WHERE tenant_id = ${tenantId} AND df > 0 AND left(term, 1) = ANY(${firsts}::text[])
          AND length(term) BETWEEN ${Math.min(...lens) - 2} AND ${Math.max(...lens) + 2}
        LIMIT 20000
      `.execute(db)
      return rows.map((r) => [r.term, Number(r.df)])
    },

    /**
     * BM25 over the chunks that contain one of the plan's essential terms, scored on every query term.
     * Term frequencies come from the chunk's tsvector restricted to the query lexemes (setweight marks
     * them A, ts_filter keeps A: the query lexemes plus the few title lexemes the indexer weighted A,
     * which the join then drops), so only a handful of lexemes per candidate are unnested. An occurrence in
     * the title or a heading (weight A in the stored tsvector; `tq` keeps the query's lexemes among them) counts `titleWeight` times.
     */
    async bm25(
      tenantId: string,
      plan: QueryPlan,
      k: number,
      p: Bm25Params,
      /** Candidates: chunks with one of these terms (default the plan's essential ones) ... */
      include: string[] = plan.essential.map((t) => t.term),
      /** ... and none of these (scored in an earlier round). */
      exclude: string[] = [],
    ): Promise<{ rows: ScoredChunk[]; candidates: number }> {
      if (include.length === 0) return { rows: [], candidates: 0 }
      const terms = plan.terms.map((t) => t.term)
      const idfs = plan.terms.map((t) => t.idf)
      const extraTitle = Math.max(0, (p.titleWeight ?? 1) - 1)
      // Ordered on the score rounded to 1e-9: the sum's float can differ in the last bit between chunks with the
      // same terms (summation order), and such ties must fall to the id as in process.
      const { rows } = await sql<ScoredChunk & { total: number }>`
        WITH w AS (SELECT * FROM unnest(${terms}::text[], ${idfs}::float8[]) AS w(term, idf)),
        -- parsed once, not per candidate
        tw AS MATERIALIZED (SELECT ${orQuery(terms, 'A')}::tsquery AS q),
        cand AS (
          SELECT c.id, c.document_id, greatest(c.token_count, 1)::float8 AS len,
                 ts_filter(setweight(d.v, 'A', ${terms}::text[]), '{a}') AS qv,
                 ${extraTitle > 0 ? sql`CASE WHEN d.v @@ tw.q THEN ts_filter(setweight(ts_filter(d.v, '{a}'), 'D', ${terms}::text[]), '{d}') END` : sql`NULL::tsvector`} AS tq
          FROM chunks c
          -- the stored tsvector is compressed: read it once (OFFSET 0 keeps the planner from inlining it into each use);
          -- tq, the query's lexemes in the title or a heading, is only built for the few chunks that have one there
          CROSS JOIN LATERAL (SELECT c.tsv || ''::tsvector AS v OFFSET 0) d
          CROSS JOIN tw
          WHERE c.tenant_id = ${tenantId} AND c.tsv @@ ${orQuery(include)}::tsquery
            ${exclude.length ? sql`AND NOT (c.tsv @@ ${orQuery(exclude)}::tsquery)` : sql``}
        ),
        scored AS (
          SELECT cand.id, cand.document_id,
                 sum(w.idf * (f.tf * ${p.k1 + 1}::float8) / (f.tf + ${p.k1}::float8 * (${1 - p.b}::float8 + ${p.b}::float8 * cand.len / ${plan.avgdl}::float8)))::float8 AS score
          FROM cand
          CROSS JOIN LATERAL unnest(cand.qv) AS u
          JOIN w ON w.term = u.lexeme
          LEFT JOIN LATERAL unnest(cand.tq) AS t ON t.lexeme = u.lexeme
          CROSS JOIN LATERAL (
            SELECT coalesce(array_length(u.positions, 1), 1)::float8 + ${extraTitle}::float8 * coalesce(array_length(t.positions, 1), 0) AS tf
          ) f
          GROUP BY cand.id, cand.document_id
        )
        SELECT id, document_id, score, count(*) OVER ()::int AS total
        FROM scored
        ORDER BY round(score::numeric, 9) DESC, id
        LIMIT ${k}
      `.execute(db)
      return { rows: rows.map((r) => ({ id: r.id, document_id: r.document_id, score: Number(r.score) })), candidates: rows[0]?.total ?? 0 }
    },

    /**
     * Nearest chunks by cosine with pgvector (only when the extension is installed). Without `index`: the exact scan of
     * the tenant's rows (its distance is on the column itself, which no expression index serves, so the planner cannot
     * take the shared HNSW index for a small workspace). With `index`: the shared HNSW index of the model and width
     * (vector-index.fns.ts), its cast and partial predicate repeated as literals so the planner can match it, an iterative
     * scan so the workspace filter still yields k rows, then the k re-ordered by the exact distance on the full vectors.
     */
    async vectorSearch(
      tenantId: string,
      query: ArrayLike<number>,
      model: string,
      k: number,
      index?: { spec: VectorIndexSpec; efSearch: number },
    ): Promise<ScoredChunk[]> {
      if (!features.vector) throw new Error('pgvector is not installed')
      const lit = vectorLiteral(query)
      if (!index || index.spec.dims !== query.length) {
        const { rows } = await sql<ScoredChunk>`
          SELECT id, document_id, (1 - (embedding <=> ${lit}::vector))::float8 AS score
          FROM chunks
          WHERE tenant_id = ${tenantId} AND embedding IS NOT NULL AND vector_dims(embedding) = ${query.length}
            AND (embedding_model IS NULL OR embedding_model = ${model})
          ORDER BY embedding <=> ${lit}::vector
          LIMIT ${k}
        `.execute(db)
        return rows.map((r) => ({ ...r, score: Number(r.score) }))
      }
      const { spec, efSearch } = index
      const cast = sql.raw(`${spec.type}(${spec.dims})`)
      // SET LOCAL: the settings end with the transaction, so a pooled connection carries none to its next user (and a
      // session SET would not reach Citus's workers either)
      return db.transaction().execute(async (trx) => {
        await sql`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', ${String(efSearch)}, true)`.execute(trx)
        const { rows } = await sql<ScoredChunk>`
          SELECT id, document_id, (1 - (embedding <=> ${lit}::vector))::float8 AS score
          FROM (
            SELECT id, document_id, embedding FROM chunks
            WHERE tenant_id = ${tenantId} AND embedding_model = ${sql.lit(spec.model)} AND vector_dims(embedding) = ${sql.lit(spec.dims)}
            ORDER BY (embedding::${cast}) <=> ${lit}::${cast}
            LIMIT ${k}
          ) c
          ORDER BY embedding <=> ${lit}::vector
        `.execute(trx)
        return rows.map((r) => ({ ...r, score: Number(r.score) }))
      })
    },

    /** The width of the tenant's stored vectors of a model (one row read); null when it has none. */
    async embeddedWidth(tenantId: string, model: string): Promise<number | null> {
      const width = features.vector ? sql`vector_dims(embedding)` : sql`array_length(embedding, 1)`
      const { rows } = await sql<{ dims: number }>`
        SELECT ${width} AS dims FROM chunks
        WHERE tenant_id = ${tenantId} AND embedding IS NOT NULL AND (embedding_model IS NULL OR embedding_model = ${model}) LIMIT 1
      `.execute(db)
      return rows[0] ? Number(rows[0].dims) : null
    },

    /** Embeddings of some chunks (exact cosine in process over candidates). */
    async embeddingsOf(tenantId: string, ids: string[], model: string): Promise<{ id: string; document_id: string; embedding: number[] }[]> {
      if (ids.length === 0) return []
      const { rows } = await sql<{ id: string; document_id: string; embedding: unknown }>`
        SELECT id, document_id, embedding FROM chunks
        WHERE tenant_id = ${tenantId} AND id = ANY(${ids}::uuid[]) AND embedding IS NOT NULL
          AND (embedding_model IS NULL OR embedding_model = ${model})
      `.execute(db)
      return rows.flatMap((r) => {
        const e = parseEmbedding(r.embedding)
        return e ? [{ id: r.id, document_id: r.document_id, embedding: e }] : []
      })
    },

    /** Every embedded chunk of the tenant, in pages (for the in-process vector cache). */
    async *allEmbeddings(tenantId: string, model: string, pageSize = 2000): AsyncGenerator<{ id: string; document_id: string; embedding: number[] }[]> {
      let after = '00000000-0000-0000-0000-000000000000'
      for (;;) {
        const { rows } = await sql<{ id: string; document_id: string; embedding: unknown }>`
          SELECT id, document_id, embedding FROM chunks
          WHERE tenant_id = ${tenantId} AND embedding IS NOT NULL AND id > ${after}::uuid
            AND (embedding_model IS NULL OR embedding_model = ${model})
          ORDER BY id LIMIT ${pageSize}
        `.execute(db)
        if (rows.length === 0) return
        yield rows.flatMap((r) => {
          const e = parseEmbedding(r.embedding)
          return e ? [{ id: r.id, document_id: r.document_id, embedding: e }] : []
        })
        if (rows.length < pageSize) return
        after = rows[rows.length - 1]!.id
      }
    },

    /**
     * Every chunk's lexemes and term frequencies, in pages by id (for the in-process BM25 postings); an
     * occurrence in the title or a heading (weight A) counts `titleWeight` times, as in the BM25 statement.
     */
    async *allTermVectors(tenantId: string, titleWeight = 1, pageSize = 2000): AsyncGenerator<TermVectorRow[]> {
      const extraTitle = Math.max(0, titleWeight - 1)
      let after = '00000000-0000-0000-0000-000000000000'
      for (;;) {
        const { rows } = await sql<{ id: string; document_id: string; len: number; lexemes: string[] | null; tfs: number[] | null }>`
          SELECT c.id, c.document_id, greatest(c.token_count, 1) AS len, a.lexemes, a.tfs
          FROM (SELECT id, document_id, token_count, tsv FROM chunks
                WHERE tenant_id = ${tenantId} AND id > ${after}::uuid ORDER BY id LIMIT ${pageSize}) c
          CROSS JOIN LATERAL (
            SELECT array_agg(u.lexeme) AS lexemes, array_agg(coalesce(array_length(u.positions, 1), 1)
                   + ${extraTitle}::float8 * (SELECT count(*) FROM unnest(u.weights) w WHERE w = 'A')) AS tfs FROM unnest(c.tsv) u
          ) a
          ORDER BY c.id
        `.execute(db)
        if (rows.length === 0) return
        yield rows.map((r) => ({ id: r.id, document_id: r.document_id, len: Number(r.len), lexemes: r.lexemes ?? [], tfs: (r.tfs ?? []).map(Number) }))
        if (rows.length < pageSize) return
        after = rows[rows.length - 1]!.id
      }
    },

    /** Text and document metadata of the chosen chunks. */
    async details(tenantId: string, ids: string[]): Promise<ChunkDetail[]> {
      if (ids.length === 0) return []
      // Only the primary key may find the rows: a prepared statement's generic plan otherwise ANDs in the tenant's
      // (tenant_id, document_id) btree, which reads every entry of the workspace (66 of 71 ms for 30 rows of a
      // 1,000,000-chunk workspace, issue 51). The tenant condition is a filter (IS TRUE is not indexable) and the
      // subquery (OFFSET 0) keeps the join to documents from driving that index.
      const { rows } = await sql<ChunkDetail>`${PREPARED}
        SELECT k.id, k.document_id, k.content, k.section_title, k.heading_path, k.source_url,
               d.title AS doc_title, d.filename, d.source_url AS doc_url
        FROM (
          SELECT c.id, c.tenant_id, c.document_id, c.content, c.section_title, c.heading_path, c.source_url FROM chunks c
          WHERE c.id = ANY(${ids}::uuid[]) AND (c.tenant_id = ${tenantId}) IS TRUE
          OFFSET 0
        ) k JOIN documents d ON d.id = k.document_id AND d.tenant_id = k.tenant_id
      `.execute(db)
      return rows
    },
  }
}

export type RetrievalRepo = ReturnType<typeof createRetrievalRepo>
