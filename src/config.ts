import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

/**
 * Every environment variable the service reads, with its default. docs/configuration.md's tables are
 * written from this list; keep them together.
 */
const EnvSchema = Type.Object({
  NODE_ENV: Type.String({ default: 'development' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8000 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  DATA_DIR: Type.String({ default: './data' }),
  DATABASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  DATABASE_PREPARED_STATEMENTS: Type.Boolean({ default: true }),
  DATABASE_POOL_IDLE_SECONDS: Type.Integer({ minimum: 0, maximum: 86_400, default: 600 }),
  REDIS_URL: Type.Optional(Type.String({ minLength: 1 })),
  REDIS_PREFIX: Type.String({ default: 'scb:' }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  ENCRYPTION_KEY: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$' })),
  SMTP_URL: Type.Optional(Type.String({ minLength: 1 })),
  EMAIL_FROM: Type.String({ default: 'Support Bot <no-reply@localhost>' }),
  PUBLIC_BASE_URL: Type.String({ default: '' }),
  FRONTEND_URL: Type.String({ default: '' }),
  CORS_ORIGINS: Type.String({ default: '' }),
  LLM_BASE_URL: Type.String({ default: 'https://api.openai.com/v1' }),
  CHAT_MODEL: Type.String({ default: 'gpt-4o-mini' }),
  GUARD_MODEL: Type.String({ default: 'gpt-4o-mini' }),
  EMBEDDING_MODEL: Type.String({ default: 'text-embedding-3-small' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  TRUST_PROXY: Type.Boolean({ default: false }),
  RUN_WORKER: Type.Boolean({ default: true }),
  /** HTTP processes `npm start` runs on PostgreSQL (src/cluster.ts); unset: one per core. Always 1 on the embedded database. */
  WEB_CONCURRENCY: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
  WORKER_POLL_MS: Type.Integer({ minimum: 10, maximum: 60000, default: 500 }),
  /** A claimed job's lease, renewed by a heartbeat every third of it: a dead worker's jobs are taken over after this. */
  JOB_LEASE_SECONDS: Type.Integer({ minimum: 3, maximum: 3600, default: 20 }),
  /** Finished jobs (done or failed) are deleted after this many days by a daily job. */
  JOBS_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 14 }),
  RATE_LIMIT_ENABLED: Type.Boolean({ default: true }),
  /** GET /metrics on the main port for this bearer token (long, random: it guards aggregate traffic figures). */
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** GET /metrics on a port of its own (on HOST), for a scraper on a private network. */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  MAX_UPLOAD_BYTES: Type.Integer({ minimum: 1024, default: 20 * 1024 * 1024 }),
  /** Chunks one document may make and one tenant may hold; a document beyond either is refused (status error). */
  MAX_CHUNKS_PER_DOCUMENT: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 5000 }),
  MAX_CHUNKS_PER_TENANT: Type.Integer({ minimum: 1, maximum: 100_000_000, default: 200_000 }),
  /** Uploads per tenant and hour; a docs folder of a few dozen files must go through at once. */
  UPLOAD_RATE_PER_HOUR: Type.Integer({ minimum: 1, maximum: 100000, default: 200 }),
  MAX_DOCUMENTS_PER_TENANT: Type.Integer({ minimum: 1, default: 500 }),
  // --- attachments (issue 54): a visitor's screenshots and documents in the widget ---
  ATTACHMENT_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 50 * 1024 * 1024, default: 10 * 1024 * 1024 }),
  /** An image declaring more pixels than this (width x height) is refused before anything decodes it. */
  ATTACHMENT_MAX_PIXELS: Type.Integer({ minimum: 1, maximum: 500_000_000, default: 40_000_000 }),
  ATTACHMENTS_PER_SESSION: Type.Integer({ minimum: 1, maximum: 1000, default: 30 }),
  ATTACHMENT_UPLOADS_PER_HOUR: Type.Integer({ minimum: 1, maximum: 100000, default: 60 }),
  ATTACHMENT_UPLOADS_AT_ONCE: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  ATTACHMENT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 90 }),
  // --- ingestion (documents) ---
  /** Vector size asked of the embedding model; unset: 1536 for text-embedding-3 models, the model's own size otherwise. */
  EMBEDDING_DIMENSIONS: Type.Optional(Type.Integer({ minimum: 1, maximum: 16000 })),
  /** Chunks per embeddings request. */
  EMBEDDING_BATCH: Type.Integer({ minimum: 1, maximum: 2048, default: 64 }),
  /** How often the backfill looks for chunks still without a vector (no key then, provider down...). */
  EMBED_BACKFILL_INTERVAL_SECONDS: Type.Integer({ minimum: 10, maximum: 86400, default: 900 }),
  /** Chunk size aimed at and the overlap between consecutive chunks of a section (estimated tokens). */
  CHUNK_TARGET_TOKENS: Type.Integer({ minimum: 50, maximum: 4000, default: 400 }),
  CHUNK_OVERLAP_TOKENS: Type.Integer({ minimum: 0, maximum: 1000, default: 40 }),
  /** Worker threads that parse uploads and chunk documents, and the time and heap each file may use. */
  PARSER_WORKERS: Type.Integer({ minimum: 1, maximum: 16, default: 2 }),
  PARSER_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 600, default: 60 }),
  PARSER_MAX_MEMORY_MB: Type.Integer({ minimum: 64, maximum: 16384, default: 1024 }),
  CRAWLER_ALLOW_PRIVATE_NETWORKS: Type.Boolean({ default: false }),
  /** Empty: "SupportBotCrawler/0.1 (+PUBLIC_BASE_URL)". The product token is what robots.txt groups match. */
  CRAWLER_USER_AGENT: Type.String({ default: '' }),
  /** Requests in flight per host (across all crawls of this process). */
  CRAWLER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 32, default: 4 }),
  /** Minimum gap between request starts on one host; robots.txt Crawl-delay raises it (up to 5 s). */
  CRAWLER_DELAY_MS: Type.Integer({ minimum: 0, maximum: 60000, default: 250 }),
  CRAWLER_PAGE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120000, default: 10000 }),
  CRAWLER_MAX_PAGE_BYTES: Type.Integer({ minimum: 1024, maximum: 100 * 1024 * 1024, default: 5 * 1024 * 1024 }),
  CRAWLER_MAX_DEPTH: Type.Integer({ minimum: 0, maximum: 10, default: 3 }),
  CRAWLER_DEFAULT_MAX_PAGES: Type.Integer({ minimum: 1, maximum: 5000, default: 200 }),
  WIDGET_LOADER_URL: Type.String({ default: '' }),
  /** A `: ping` comment on an open widget answer stream this often, so idle proxies keep it open. */
  WIDGET_SSE_HEARTBEAT_MS: Type.Integer({ minimum: 100, maximum: 120000, default: 15000 }),
  OPERATOR_REPLY_GRACE_SECONDS: Type.Integer({ minimum: 0, default: 600 }),
  // --- e-mail channel (src/modules/email-channel) ---
  /** The domain of the bots' inbound addresses (<local>@domain); an MX record points it at this service or at a provider. */
  INBOUND_EMAIL_DOMAIN: Type.String({ default: 'inbound.localhost' }),
  INBOUND_EMAIL_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 100 * 1024 * 1024, default: 10 * 1024 * 1024 }),
  /** Bot mails (answers and ticket notices) one bot sends in an hour across all senders; beyond, a person gets the mail. */
  EMAIL_BOT_HOURLY_CAP: Type.Integer({ minimum: 1, maximum: 100000, default: 100 }),
  /** Inbound mails one bot takes a minute (webhook and SMTP together); beyond: 429 / SMTP 451, the sender retries. */
  INBOUND_EMAIL_PER_BOT_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 100000, default: 120 }),
  /** The SMTP listener for inbound mail; unset: none (mail arrives through the provider webhook). */
  INBOUND_SMTP_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  INBOUND_SMTP_TLS_CERT: Type.Optional(Type.String({ minLength: 1 })),
  INBOUND_SMTP_TLS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** Days live conversation events (the streams' replay log) are kept (daily cleanup); messages stay in the history. */
  LIVE_EVENTS_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  /** A queued or person-owned conversation whose visitor has no open stream and wrote nothing this long is marked gone (#39). */
  VISITOR_GONE_MINUTES: Type.Integer({ minimum: 1, maximum: 1440, default: 10 }),
  /** A gone visitor's conversation with no e-mail address to answer is closed after this many hours. */
  GONE_CLOSE_HOURS: Type.Integer({ minimum: 1, maximum: 720, default: 24 }),
  /** Days PII audit events are kept when the tenant has not set its own retention (daily cleanup). */
  PII_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 365 }),
  // --- answer pipeline (chat) ---
  /** All guard checks (injection, relevance, human request) on GUARD_MODEL; each can also be switched alone. */
  GUARDS_ENABLED: Type.Boolean({ default: true }),
  GUARD_INJECTION_ENABLED: Type.Boolean({ default: true }),
  GUARD_RELEVANCE_ENABLED: Type.Boolean({ default: true }),
  GUARD_HUMAN_ENABLED: Type.Boolean({ default: true }),
  /** Time allowed to each guard-model call (guards, rewriting, validation); on timeout the turn goes on without it. */
  GUARD_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 60000, default: 4000 }),
  /** Answer check on GUARD_MODEL after generation (one regeneration, else a safe fallback). */
  VALIDATION_ENABLED: Type.Boolean({ default: true }),
  /** Generation: time to the first token (then one retry) and total time for the answer. */
  /** Request the answer while the guards and the query embedding run; keep it only if they pass and the prompt is unchanged. */
  CHAT_SPECULATIVE_ANSWER: Type.Boolean({ default: true }),
  /**
   * A new question's answer may start from the BM25 evidence when its query embedding is not back 25 ms later
   * (kept if the hybrid evidence agrees at the top, else restarted: the restarted ones cost their prompt twice).
   */
  CHAT_EARLY_ANSWER_FROM_BM25: Type.Boolean({ default: true }),
  /** Query embeddings kept for repeated questions (entries of float32; 0 turns the cache off). */
  CHAT_QUERY_EMBEDDING_CACHE: Type.Integer({ minimum: 0, maximum: 100000, default: 1000 }),
  CHAT_FIRST_TOKEN_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120000, default: 15000 }),
  CHAT_TIMEOUT_MS: Type.Integer({ minimum: 500, maximum: 300000, default: 60000 }),
  CHAT_MAX_ANSWER_TOKENS: Type.Integer({ minimum: 16, maximum: 8000, default: 700 }),
  /** An evaluation run stops (marked partial) once its turns have used this many model tokens. */
  EVAL_MAX_TOKENS: Type.Integer({ minimum: 1000, maximum: 100_000_000, default: 200_000 }),
  /** An automatic evaluation run starts this long after the knowledge change (a crawl's pages settle), at most hourly. */
  EVAL_AUTO_RUN_DELAY_SECONDS: Type.Integer({ minimum: 0, maximum: 3600, default: 120 }),
  /** Turns of history given to rewriting and the prompt, and the characters kept of each. */
  CHAT_HISTORY_TURNS: Type.Integer({ minimum: 0, maximum: 50, default: 6 }),
  CHAT_HISTORY_MESSAGE_CHARS: Type.Integer({ minimum: 50, maximum: 20000, default: 1200 }),
  /**
   * Retrieval: at most this many passages given to the model, within RETRIEVAL_SOURCE_TOKENS (0: RETRIEVAL_TOP_K whole
   * chunks, the old fixed count); the confidence (0..1) below which a ticket is opened, and below which the answer carries a caveat.
   */
  RETRIEVAL_TOP_K: Type.Integer({ minimum: 1, maximum: 20, default: 10 }),
  RETRIEVAL_SOURCE_TOKENS: Type.Integer({ minimum: 0, maximum: 100_000, default: 1500 }),
  RETRIEVAL_MIN_SCORE: Type.Number({ minimum: 0, maximum: 1, default: 0.2 }),
  RETRIEVAL_CAVEAT_SCORE: Type.Number({ minimum: 0, maximum: 1, default: 0.4 }),
  /**
   * Relevance floor (src/modules/retrieval/relevance.fns.ts), whatever the guard model says: a question reaches the answer
   * model only when a top chunk holds one of its topical words (and, above 0, this idf-weighted share of its content terms),
   * or the top cosine reaches the embedding model's value in RETRIEVAL_FLOOR_COSINE ("model=cosine,..."; "model=none"
   * switches a model's vectors off; a model not listed takes KNOWN_FLOOR_COSINES' value for OpenAI's models, else
   * one measured on the tenant's knowledge with off-topic probes, retrieval/floor-probes.ts). The answer model then gives its "not in the sources" verdict. Measured by bench:grounding.
   */
  RETRIEVAL_FLOOR_LEXICAL: Type.Number({ minimum: 0, maximum: 1, default: 0 }),
  RETRIEVAL_FLOOR_COSINE: Type.String({ default: '' }),
  /**
   * A search query rewritten by the chat model into the knowledge's likely words, fused with the question's own retrieval
   * (chat/stages/05-search-rewrite.ts): off, weak (only when the question's words cover under half of a top hit's
   * evidence), always. One short call (at most 48 tokens, 3 s) per rewritten turn; a failure keeps the original retrieval.
   */
  RETRIEVAL_QUERY_REWRITE: Type.Union([Type.Literal('off'), Type.Literal('weak'), Type.Literal('always')], { default: 'off' }),
  /**
   * Cross-language retrieval (chat/stages/05-translate.ts): the weight of the ranking for the question translated into
   * the knowledge's language against the ranking for the question as asked (1), when the two are fused.
   */
  RETRIEVAL_TRANSLATED_WEIGHT: Type.Number({ minimum: 1, maximum: 10, default: 2 }),
  /** Chunks BM25 scores per query: those holding the query's rarest terms, up to about this many (MaxScore planning). */
  RETRIEVAL_LEXICAL_BUDGET: Type.Integer({ minimum: 50, maximum: 1000000, default: 500 }),
  /** Memory for per-tenant embedding caches when pgvector is absent (exact cosine in process). */
  RETRIEVAL_VECTOR_CACHE_MB: Type.Integer({ minimum: 0, maximum: 4096, default: 80 }),
  /**
   * With pgvector: a workspace with at least this many embedded chunks searches its vectors through the shared HNSW
   * index of its model and width (built by a job when the first workspace crosses it); below, the exact scan of its own
   * rows, which is exact and cheap at that size (docs/operations.md, measured in docs/performance.md).
   */
  RETRIEVAL_VECTOR_INDEX_MIN_CHUNKS: Type.Integer({ minimum: 1, maximum: 100000000, default: 10000 }),
  /** `hnsw.ef_search` of an index search (at least k): recall against speed. */
  RETRIEVAL_HNSW_EF_SEARCH: Type.Integer({ minimum: 10, maximum: 1000, default: 100 }),
  /** maintenance_work_mem of an HNSW build, in MB: the build is much faster while the graph fits. */
  RETRIEVAL_VECTOR_INDEX_BUILD_MB: Type.Integer({ minimum: 64, maximum: 65536, default: 512 }),
  /** Memory for per-tenant BM25 postings scored in process (0: BM25 always runs as SQL). */
  RETRIEVAL_LEXICAL_CACHE_MB: Type.Integer({ minimum: 0, maximum: 4096, default: 32 }),
  RETRIEVAL_DETAIL_CACHE_MB: Type.Integer({ minimum: 0, maximum: 4096, default: 16 }),
  /** Idempotency-Key: how long a duplicate waits for the first request before 409 idempotency_in_flight. */
  IDEMPOTENCY_WAIT_MS: Type.Integer({ minimum: 0, maximum: 60000, default: 8000 }),
  // --- knowledge profile, FAQ candidates, gap analyzer ---
  /** Debounce: the profile and FAQ extraction runs this long after the last document was indexed. */
  KNOWLEDGE_EXTRACT_DELAY_SECONDS: Type.Integer({ minimum: 0, maximum: 86400, default: 60 }),
  /** How often tenants whose documents changed without an extraction are picked up again. */
  KNOWLEDGE_SWEEP_INTERVAL_SECONDS: Type.Integer({ minimum: 10, maximum: 86400, default: 600 }),
  /** Time allowed to each guard-model call of the extraction, the topic discovery and drafts. */
  KNOWLEDGE_LLM_TIMEOUT_MS: Type.Integer({ minimum: 500, maximum: 300000, default: 30000 }),
  /** Documents whose FAQ extraction uses the model in one run (the rest follow in the next rounds). */
  KNOWLEDGE_FAQ_DOCS_PER_RUN: Type.Integer({ minimum: 1, maximum: 1000, default: 25 }),
  /** With the tenant's auto-approve on, new FAQ candidates at or above this confidence are approved. */
  FAQ_AUTO_APPROVE_CONFIDENCE: Type.Number({ minimum: 0, maximum: 1, default: 0.85 }),
  /** An approved FAQ scoring at least this against a question joins the answer's context ... */
  FAQ_CONTEXT_SCORE: Type.Number({ minimum: 0, maximum: 1, default: 0.5 }),
  /** ... and at least this answers the question directly, cited as the FAQ (no generation). */
  FAQ_DIRECT_SCORE: Type.Number({ minimum: 0, maximum: 1, default: 0.9 }),
  /** Gap coverage (0..1): below PARTIAL a gap is uncovered, below COVERED partial, else covered. */
  GAP_PARTIAL_SCORE: Type.Number({ minimum: 0, maximum: 1, default: 0.35 }),
  GAP_COVERED_SCORE: Type.Number({ minimum: 0, maximum: 1, default: 0.6 }),
  /** Visitor questions considered by mode B (age and count), and after how many quiet days a cluster is inactive. */
  GAP_LOOKBACK_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 90 }),
  GAP_MAX_QUESTIONS: Type.Integer({ minimum: 100, maximum: 200000, default: 20000 }),
  GAP_INACTIVE_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  /** Smallest cluster of visitor questions listed as a gap. */
  GAP_MIN_CLUSTER_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 2 }),
  /** Clusters (largest signal first) whose coverage is measured again with retrieval; the rest use the logged scores. */
  GAP_RESCORE_LIMIT: Type.Integer({ minimum: 0, maximum: 5000, default: 100 }),
})

export type Env = Static<typeof EnvSchema>

export type Config = Readonly<
  Omit<Env, 'JWT_SECRET' | 'ENCRYPTION_KEY' | 'CORS_ORIGINS'> & {
    JWT_SECRET: string
    ENCRYPTION_KEY: string
    CORS_ORIGINS: readonly string[]
    isProduction: boolean
    /** Absolute path of DATA_DIR. */
    dataDir: string
  }
>

export class ConfigError extends Error {}

/** Values that mean "unset" in an env file, so `FOO=` behaves like no FOO at all. */
function cleanEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {}
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = env[key]
    if (v !== undefined && v.trim() !== '') out[key] = v.trim()
  }
  return out
}

/**
 * Validates the environment once. Outside production, missing JWT_SECRET / ENCRYPTION_KEY are generated
 * once and kept in DATA_DIR/secrets.json so restarts keep sessions and encrypted data readable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, warn: (msg: string) => void = (m) => console.warn(m)): Config {
  const raw: Record<string, unknown> = cleanEnv(env)
  const withDefaults = Value.Default(EnvSchema, Value.Convert(EnvSchema, raw)) as Record<string, unknown>
  const errors = [...Value.Errors(EnvSchema, withDefaults)]
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.path.replace(/^\//, '') || '(root)'}: ${e.message}`)
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`)
  }
  const parsed = withDefaults as Env
  const isProduction = parsed.NODE_ENV === 'production'
  const dataDir = resolve(parsed.DATA_DIR)

  let jwtSecret = parsed.JWT_SECRET
  let encryptionKey = parsed.ENCRYPTION_KEY
  if (isProduction) {
    const missing = [!jwtSecret && 'JWT_SECRET', !encryptionKey && 'ENCRYPTION_KEY'].filter(Boolean)
    if (missing.length) {
      throw new ConfigError(`NODE_ENV=production requires ${missing.join(' and ')} to be set`)
    }
  } else if (!jwtSecret || !encryptionKey) {
    const generated = loadOrCreateDevSecrets(dataDir)
    if (!jwtSecret) {
      jwtSecret = generated.JWT_SECRET
      warn(`JWT_SECRET is not set; using a generated one kept in ${join(dataDir, 'secrets.json')}`)
    }
    if (!encryptionKey) {
      encryptionKey = generated.ENCRYPTION_KEY
      warn(`ENCRYPTION_KEY is not set; using a generated one kept in ${join(dataDir, 'secrets.json')}`)
    }
  }

  return Object.freeze({
    ...parsed,
    JWT_SECRET: jwtSecret!,
    ENCRYPTION_KEY: encryptionKey!,
    CORS_ORIGINS: parsed.CORS_ORIGINS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    PUBLIC_BASE_URL: parsed.PUBLIC_BASE_URL.replace(/\/+$/, ''),
    FRONTEND_URL: parsed.FRONTEND_URL.replace(/\/+$/, ''),
    isProduction,
    dataDir,
  })
}

function loadOrCreateDevSecrets(dataDir: string): { JWT_SECRET: string; ENCRYPTION_KEY: string } {
  const file = join(dataDir, 'secrets.json')
  if (existsSync(file)) {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { JWT_SECRET?: string; ENCRYPTION_KEY?: string }
    if (parsed.JWT_SECRET && parsed.ENCRYPTION_KEY) {
      return { JWT_SECRET: parsed.JWT_SECRET, ENCRYPTION_KEY: parsed.ENCRYPTION_KEY }
    }
  }
  mkdirSync(dataDir, { recursive: true })
  const secrets = {
    JWT_SECRET: randomBytes(48).toString('base64url'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  }
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 })
  return secrets
}

/** The names of all variables, for docs and tests. */
export const CONFIG_KEYS = Object.keys(EnvSchema.properties)

export { CONFIG_DOCS } from './config.docs.js'

/** The schema's default of a variable as text (empty for unset ones), for generated docs. */
export function configDefault(key: string): string {
  const schema = (EnvSchema.properties as Record<string, { default?: unknown }>)[key]
  return schema?.default === undefined ? '' : String(schema.default)
}
