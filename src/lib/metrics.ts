import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { ChatStream, LlmClient, LlmUsage } from '../modules/llm/llm.js'

/**
 * The service's Prometheus metrics (prom-client), one registry per AppContext: tests build several apps in
 * one process, and a process-wide registry would mix their figures and refuse the second registration.
 * Recording is always on (a few counter increments per request); exposing is decided in http/metrics.ts
 * (METRICS_TOKEN, METRICS_PORT).
 *
 * Names carry the `scb_` prefix (support chatbot) so they sort together beside the process metrics.
 */
export type CacheOutcome = 'hit' | 'miss' | 'bypass'

export function createMetrics() {
  const registry = new Registry()
  const registers = [registry]

  const httpDuration = new Histogram({
    name: 'scb_http_request_duration_seconds',
    help: 'HTTP requests by route pattern (not the raw URL, so ids do not explode the series), method and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  })
  const llmDuration = new Histogram({
    name: 'scb_llm_request_duration_seconds',
    help: 'Language-model calls (chat, chat_stream, embed) by model and outcome; a stream is timed to its end',
    labelNames: ['operation', 'model', 'outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
    registers,
  })
  const llmErrors = new Counter({
    name: 'scb_llm_errors_total',
    help: 'Failed language-model calls by operation and kind (http, timeout, aborted, network, malformed)',
    labelNames: ['operation', 'kind'] as const,
    registers,
  })
  const llmTokens = new Counter({
    name: 'scb_llm_tokens_total',
    help: 'Tokens reported by the provider (or estimated when it reports none), by operation, model and type',
    labelNames: ['operation', 'model', 'type'] as const,
    registers,
  })
  const embeddingInputs = new Counter({
    name: 'scb_embedding_inputs_total',
    help: 'Texts sent to the embedding model',
    labelNames: ['model'] as const,
    registers,
  })
  const jobs = new Histogram({
    name: 'scb_job_duration_seconds',
    help: 'Jobs run by this process, by kind and outcome (done, retry, failed)',
    labelNames: ['kind', 'outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800],
    registers,
  })
  const crawlFetches = new Counter({
    name: 'scb_crawl_fetches_total',
    help: 'Crawler requests by outcome (ok, not_modified, failed, known)',
    labelNames: ['outcome'] as const,
    registers,
  })
  const crawlBytes = new Counter({ name: 'scb_crawl_bytes_total', help: 'Bytes of pages the crawler read', registers })
  const ingestDocuments = new Counter({ name: 'scb_ingest_documents_total', help: 'Uploaded documents indexed (ready)', registers })
  const ingestBytes = new Counter({ name: 'scb_ingest_bytes_total', help: 'Bytes of uploaded documents indexed', registers })
  const ingestChunks = new Counter({ name: 'scb_ingest_chunks_total', help: 'Chunks of uploaded documents indexed', registers })
  const cache = new Counter({
    name: 'scb_cache_requests_total',
    help: 'Row-cache lookups by cache (change-feed topic) and result; hit / (hit + miss) is the hit rate, bypass counts reads while the feed was not live',
    labelNames: ['cache', 'result'] as const,
    registers,
  })
  const chatStage = new Histogram({
    name: 'scb_chat_stage_duration_seconds',
    help: 'Time of each stage of a chat turn (guards, rewrite, retrieve, generate, validate, persist ...)',
    labelNames: ['stage'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  })

  let defaultsOn = false
  const metrics = {
    registry,

    /** Process metrics (CPU, memory, event loop lag, GC), once, only where metrics are exposed. */
    enableProcessMetrics() {
      if (defaultsOn) return
      defaultsOn = true
      collectDefaultMetrics({ register: registry, prefix: 'scb_' })
    },

    observeHttp(method: string, route: string, statusCode: number, seconds: number) {
      httpDuration.observe({ method, route, status_code: String(statusCode) }, seconds)
    },

    /** For the chat stages: `observeStage('retrieve', ms)`. */
    observeStage(stage: string, ms: number) {
      chatStage.observe({ stage }, ms / 1000)
    },

    observeJob(kind: string, outcome: 'done' | 'retry' | 'failed', ms: number) {
      jobs.observe({ kind, outcome }, ms / 1000)
    },

    /**
     * A gauge read at scrape time from shared state (e.g. queue depth from the database). Several processes of
     * one service (src/cluster.ts) each read the same figure, so their aggregate takes it once, not summed.
     */
    gauge(name: string, help: string, labelNames: string[], collect: (set: (labels: Record<string, string>, value: number) => void) => Promise<void>) {
      new Gauge({
        name,
        help,
        labelNames,
        aggregator: 'first',
        registers,
        async collect() {
          this.reset()
          await collect((labels, value) => this.set(labels, value))
        },
      })
    },

    crawlFetch(outcome: string, bytes: number) {
      crawlFetches.inc({ outcome })
      if (bytes > 0) crawlBytes.inc(bytes)
    },

    documentIndexed(bytes: number, chunks: number) {
      ingestDocuments.inc()
      ingestBytes.inc(bytes)
      ingestChunks.inc(chunks)
    },

    cacheLookup(cacheName: string, result: CacheOutcome) {
      cache.inc({ cache: cacheName, result })
    },

    /** The LLM client every module uses, timing each call and counting its tokens and errors. */
    wrapLlm(llm: LlmClient): LlmClient {
      const done = (operation: string, model: string, started: number, usage: LlmUsage | null, err?: unknown) => {
        llmDuration.observe({ operation, model, outcome: err ? 'error' : 'ok' }, (performance.now() - started) / 1000)
        if (err) llmErrors.inc({ operation, kind: String((err as { kind?: string }).kind ?? 'network') })
        if (usage) {
          llmTokens.inc({ operation, model, type: 'prompt' }, usage.prompt_tokens)
          if (usage.completion_tokens) llmTokens.inc({ operation, model, type: 'completion' }, usage.completion_tokens)
        }
      }
      return {
        async chat(opts) {
          const started = performance.now()
          try {
            const r = await llm.chat(opts)
            done('chat', opts.model, started, r.usage)
            return r
          } catch (err) {
            done('chat', opts.model, started, null, err)
            throw err
          }
        },
        async embed(opts) {
          const started = performance.now()
          embeddingInputs.inc({ model: opts.model }, opts.input.length)
          try {
            const r = await llm.embed(opts)
            done('embed', opts.model, started, r.usage)
            return r
          } catch (err) {
            done('embed', opts.model, started, null, err)
            throw err
          }
        },
        chatStream(opts): ChatStream {
          const started = performance.now()
          const inner = llm.chatStream(opts)
          const result = inner.result()
          result.then(
            (r) => done('chat_stream', opts.model, started, r.usage),
            (err) => done('chat_stream', opts.model, started, null, err),
          )
          return { [Symbol.asyncIterator]: () => inner[Symbol.asyncIterator](), result: () => result }
        },
      }
    },
  }
  return metrics
}

export type Metrics = ReturnType<typeof createMetrics>
