/**
 * Runs the fake OpenAI-compatible model (test/fakes/fake-llm.ts) for offline demos and benchmarks:
 *   npm run fake-llm            (FAKE_LLM_PORT, default 8787; FAKE_LLM_HOST, default 127.0.0.1;
 *                                FAKE_LLM_EMBEDDING_DIMS, default 1536; FAKE_LLM_LATENCY_MS, default 0:
 *                                every call waits this long before its first token or its reply)
 * then start the service with the printed LLM_BASE_URL.
 */
import { startFakeLlm } from '../test/fakes/fake-llm.js'

const port = Number(process.env.FAKE_LLM_PORT ?? 8787)
const host = process.env.FAKE_LLM_HOST ?? '127.0.0.1'
const embeddingDims = Number(process.env.FAKE_LLM_EMBEDDING_DIMS ?? 1536)

const latencyMs = Number(process.env.FAKE_LLM_LATENCY_MS ?? 0)

const fake = await startFakeLlm({ port, host, embeddingDims, maxRecorded: 200 })
// a model as slow as a real one: chat (streamed or not) and embeddings alike
if (latencyMs > 0) fake.fail('slow_first_token', { delayMs: latencyMs })
console.log(`fake LLM listening. Start the service with:\n  LLM_BASE_URL=${fake.url}`)

let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  await fake.close()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
