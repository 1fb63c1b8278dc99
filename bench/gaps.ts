/**
 * Gap analyzer figures (npm run bench:gaps): how long a full recalculation (mode A + mode B) takes for
 * BENCH_QUESTIONS (default 10,000) recorded visitor questions, and what it does to other traffic on the
 * same process while it runs (the default deployment: HTTP server and job worker in one process).
 *
 * The app runs in this process (PGlite by default; BENCH_DATABASE_URL=postgres://... uses a scratch
 * database on that server), with a real SMTP fake for the sign-up and the fake model in a child process
 * (`scripts/fake-llm.ts`). One tenant gets a help document (about 40% of the visitor intents answered)
 * through POST /documents, and the questions are written to question_log directly (with their assistant
 * replies in chat_messages): ~150 intents phrased 8 ways with a Zipf spread, outcomes and feedback as a
 * real log would have them, plus one-off questions. Two runs: "lexical" (tenant without a model key:
 * tf-idf clustering, BM25 coverage) and "embeddings" (key set: question embeddings, hybrid coverage).
 * During each run GET /health and GET /bots (JWT, one DB query) are polled every 25 ms and the event-loop
 * delay is sampled. Keep it short on a shared machine: the figures move with whatever else runs.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { randomBytes, randomUUID } from 'node:crypto'
import { FakeSmtp, tokenFromMail } from '../test/fakes/smtp.js'
import { benchService, freePort } from './support.js'

const N = Number(process.env.BENCH_QUESTIONS ?? 10_000)
const PG_URL = process.env.BENCH_DATABASE_URL
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN
}
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-')

async function startFakeLlmProcess(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/fake-llm.ts'], {
    env: { PATH: process.env.PATH ?? '', FAKE_LLM_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const url = `http://127.0.0.1:${port}/v1`
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/models`, { headers: { authorization: 'Bearer x' } })).ok) return { url, child }
    } catch {
      // not up yet
    }
    await sleep(50)
  }
  throw new Error('fake LLM did not start')
}

// --- synthetic knowledge and question log --------------------------------------------------------------

const ACTIONS = [
  'cancel',
  'upgrade',
  'downgrade',
  'pause',
  'renew',
  'change',
  'reset',
  'delete',
  'export',
  'import',
  'share',
  'transfer',
  'verify',
  'update',
  'refund',
]
const OBJECTS = [
  'subscription',
  'password',
  'account',
  'invoice',
  'plan',
  'payment method',
  'email address',
  'team member',
  'API key',
  'project',
  'data',
  'billing address',
  'order',
  'shipment',
  'two-factor authentication',
]
const TEMPLATES = [
  (a: string, o: string) => `How do I ${a} my ${o}?`,
  (a: string, o: string) => `how can I ${a} the ${o}`,
  (a: string, o: string) => `${a[0]!.toUpperCase()}${a.slice(1)} ${o} please`,
  (a: string, o: string) => `I want to ${a} my ${o}`,
  (a: string, o: string) => `Is it possible to ${a} my ${o}?`,
  (a: string, o: string) => `where can I ${a} my ${o}`,
  (a: string, o: string) => `help me ${a} ${o}`,
  (a: string, o: string) => `${a} ${o} not working, what now?`,
]
/** Extra words half of the questions carry, so most wordings are distinct (as in a real log). */
const FILLERS =
  'today|asap|on mobile|in the app|for my team|from the dashboard|on iPhone|on Android|for my company|again|right now|after the update|in Germany|for the pro plan|without losing data|with the API|for a colleague|before Friday|on the web|this month'.split(
    '|',
  )
const NOISE = 'weather football pizza recipe poem holiday music movie garden painting chess guitar coffee bicycle'.split(' ')

function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0
    return s / 2 ** 32
  }
}

function buildData(n: number) {
  const rand = rng(7)
  const intents: { a: string; o: string; covered: boolean }[] = []
  const seen = new Set<string>()
  while (intents.length < 150) {
    const a = ACTIONS[Math.floor(rand() * ACTIONS.length)]!
    const o = OBJECTS[Math.floor(rand() * OBJECTS.length)]!
    if (seen.has(a + o)) continue
    seen.add(a + o)
    intents.push({ a, o, covered: intents.length % 5 < 2 })
  }
  const doc = [
    '# Help center',
    '',
    ...intents
      .filter((i) => i.covered)
      .flatMap((i) => [
        `## How do I ${i.a} my ${i.o}?`,
        '',
        `To ${i.a} your ${i.o}, open Settings, choose ${i.o} and press ${i.a[0]!.toUpperCase()}${i.a.slice(1)}. The change applies at once and you get a confirmation e-mail.`,
        '',
      ]),
  ].join('\n')
  // Zipf over intents: a few are asked very often, many rarely
  const weights = intents.map((_, i) => 1 / (i + 1) ** 0.9)
  const total = weights.reduce((x, y) => x + y, 0)
  const pick = () => {
    let r = rand() * total
    for (let i = 0; i < weights.length; i++) if ((r -= weights[i]!) <= 0) return i
    return weights.length - 1
  }
  const questions: { question: string; outcome: string; feedback: string; best: number; ageDays: number }[] = []
  for (let k = 0; k < n; k++) {
    if (rand() < 0.08) {
      const w = () => NOISE[Math.floor(rand() * NOISE.length)]!
      questions.push({ question: `What about ${w()} and ${w()} ${k}?`, outcome: 'refused', feedback: 'none', best: 0.02, ageDays: rand() * 60 })
      continue
    }
    const it = intents[pick()]!
    const base = TEMPLATES[Math.floor(rand() * TEMPLATES.length)]!(it.a, it.o)
    const q = rand() < 0.5 ? `${base.replace(/[?]$/, '')} ${FILLERS[Math.floor(rand() * FILLERS.length)]}${base.endsWith('?') ? '?' : ''}` : base
    const r = rand()
    const outcome = it.covered ? (r < 0.85 ? 'answered' : r < 0.95 ? 'caveat' : 'escalated') : r < 0.35 ? 'caveat' : r < 0.85 ? 'escalated' : 'answered'
    const fr = rand()
    const feedback = fr < 0.05 ? (it.covered ? 'up' : 'down') : fr < 0.08 ? 'down' : 'none'
    questions.push({ question: q, outcome, feedback, best: it.covered ? 0.5 + rand() * 0.4 : rand() * 0.3, ageDays: rand() * 60 })
  }
  return { doc, questions, intents }
}

// --- main ------------------------------------------------------------------------------------------------

async function main() {
  const fake = await startFakeLlmProcess()
  const smtp = await new FakeSmtp().start()
  const service = await benchService(
    'gaps',
    {
      NODE_ENV: 'production',
      SMTP_URL: smtp.url,
      LLM_BASE_URL: fake.url,
      LOG_LEVEL: 'warn',
      WORKER_POLL_MS: '50',
      KNOWLEDGE_EXTRACT_DELAY_SECONDS: '86400',
    },
    PG_URL,
  )
  const { ctx, url: base } = service
  const json = async (method: string, path: string, token: string | null, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}),
      },
      body: body instanceof FormData ? body : body !== undefined ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }

  try {
    // a tenant, signed up through the API
    const email = `bench-${randomBytes(4).toString('hex')}@example.test`
    await json('POST', '/auth/register', null, { email, password: 'Corr3ct-Horse!' })
    const mail = await smtp.waitFor((m) => m.to.includes(email))
    const verified = await json('POST', '/auth/verify-email', null, { token: tokenFromMail(mail) })
    const token = verified.body.token as string
    const tenantId = verified.body.user.tenant_id as string
    const data = buildData(N)
    const form = new FormData()
    form.append('file', new Blob([data.doc]), 'help-center.md')
    const up = await json('POST', '/documents', token, form)
    for (;;) {
      const d = await json('GET', `/documents/${up.body.id}`, token)
      if (d.body.status !== 'processing') break
      await sleep(100)
    }
    await json('PATCH', '/knowledge/profile', token, { topics: [...new Set(data.intents.map((i) => i.o))].slice(0, 15).map((o) => `${o} management`) })

    // the recorded questions (and the assistant replies of the answered ones)
    const t0 = performance.now()
    const bot = await ctx.db.selectFrom('bots').select('id').where('tenant_id', '=', tenantId).executeTakeFirstOrThrow()
    const now = Date.now()
    const session = await ctx.db
      .insertInto('chat_sessions')
      .values({
        tenant_id: tenantId,
        bot_id: bot.id,
        channel: 'api',
        identity_enc: null,
        visitor_email_enc: null,
        locale: null,
        awaiting: null,
        read_message_id: null,
        last_question: null,
        last_answer_preview: null,
        created_at: new Date(now),
        last_activity_at: new Date(now),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    for (let i = 0; i < data.questions.length; i += 1000) {
      const slice = data.questions.slice(i, i + 1000).map((q) => ({ ...q, messageId: randomUUID(), at: new Date(now - q.ageDays * 86400_000) }))
      await ctx.db
        .insertInto('chat_messages')
        .values(
          slice.map((q) => ({
            id: q.messageId,
            tenant_id: tenantId,
            session_id: session.id,
            role: 'assistant' as const,
            content: q.outcome === 'answered' ? `Open Settings and follow the steps for: ${q.question} [1]` : 'A person from our team will follow up.',
            content_original_enc: null,
            pii_counts: null,
            feedback: q.feedback as 'none' | 'up' | 'down',
            ideal_answer: null,
            source_documents: '[]',
            sources: '[]',
            debug: null,
            created_at: q.at,
          })),
        )
        .execute()
      await ctx.db
        .insertInto('question_log')
        .values(
          slice.map((q) => ({
            tenant_id: tenantId,
            bot_id: bot.id,
            session_id: session.id,
            message_id: q.messageId,
            question: q.question,
            outcome: q.outcome as 'answered',
            trigger: q.outcome === 'escalated' ? ('low_similarity' as const) : null,
            best_score: q.best,
            feedback: q.feedback as 'none',
            created_at: q.at,
          })),
        )
        .execute()
    }
    console.log(
      `setup: ${N} questions (${data.intents.length} intents, ${data.intents.filter((i) => i.covered).length} documented) written in ${Math.round(performance.now() - t0)} ms; database ${PG_URL ? 'PostgreSQL' : 'PGlite'}`,
    )

    async function measureIdle(ms: number) {
      const health: number[] = []
      const bots: number[] = []
      const end = performance.now() + ms
      while (performance.now() < end) {
        let s = performance.now()
        await fetch(`${base}/health`).then((r) => r.arrayBuffer())
        health.push(performance.now() - s)
        s = performance.now()
        await fetch(`${base}/bots`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.arrayBuffer())
        bots.push(performance.now() - s)
        await sleep(25)
      }
      return { health, bots }
    }

    const idle = await measureIdle(2000)
    console.log(
      `idle:  /health p50 ${f1(pct(idle.health, 50))} ms p99 ${f1(pct(idle.health, 99))} ms | /bots p50 ${f1(pct(idle.bots, 50))} ms p99 ${f1(pct(idle.bots, 99))} ms`,
    )

    for (const variant of ['lexical', 'embeddings'] as const) {
      await json('PATCH', '/tenants/me', token, { llm_api_key: variant === 'embeddings' ? 'sk-bench-0123456789' : null })
      const loop = monitorEventLoopDelay({ resolution: 5 })
      const health: number[] = []
      const bots: number[] = []
      let running = true
      const poller = (async () => {
        while (running) {
          let s = performance.now()
          await fetch(`${base}/health`).then((r) => r.arrayBuffer())
          health.push(performance.now() - s)
          s = performance.now()
          await fetch(`${base}/bots`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.arrayBuffer())
          bots.push(performance.now() - s)
          await sleep(25)
        }
      })()
      loop.enable()
      const started = performance.now()
      const r = await json('POST', '/gap-analyzer/recalculate?mode=both', token)
      const acceptMs = performance.now() - started
      let run
      for (;;) {
        run = await ctx.db
          .selectFrom('gap_runs')
          .select(['status', 'stats', 'started_at', 'finished_at'])
          .where('id', '=', r.body.run_id)
          .executeTakeFirstOrThrow()
        if (run.status === 'done' || run.status === 'failed') break
        await sleep(50)
      }
      const total = performance.now() - started
      loop.disable()
      running = false
      await poller
      const stats = run.stats as Record<string, any>
      const list = await json('GET', '/gap-analyzer', token)
      const faq = await json('GET', '/knowledge/faq?source=logs&limit=1', token)
      console.log(
        `\n[${variant}] run ${run.status}: ${(total / 1000).toFixed(2)} s from the request to done (202 in ${f1(acceptMs)} ms; job ${stats?.duration_ms} ms)`,
      )
      console.log(`  mode A: ${JSON.stringify(stats?.mode_a)}`)
      console.log(
        `  mode B: questions ${stats?.mode_b?.questions}, groups ${stats?.mode_b?.groups}, clusters ${stats?.mode_b?.clusters}, gaps ${stats?.mode_b?.gaps}, embeddings ${stats?.mode_b?.embeddings}, FAQ candidates ${stats?.mode_b?.faq_candidates}; timings ${JSON.stringify(stats?.mode_b?.timings_ms)}`,
      )
      console.log(
        `  listed: ${list.body.mode_a_items.length} mode A, ${list.body.mode_b_items.length} mode B active; top mode B: ${list.body.mode_b_items
          .slice(0, 3)
          .map((g: any) => `"${g.label}" (${g.question_count} q, signal ${g.signal_weight}, coverage ${g.coverage_score})`)
          .join('; ')}; logs FAQs total ${faq.body.total}`,
      )
      console.log(
        `  during the run: event-loop delay p50 ${f1(loop.percentile(50) / 1e6)} ms, p99 ${f1(loop.percentile(99) / 1e6)} ms, max ${f1(loop.max / 1e6)} ms`,
      )
      console.log(`  /health (${health.length} requests) p50 ${f1(pct(health, 50))} ms, p99 ${f1(pct(health, 99))} ms, max ${f1(Math.max(...health))} ms`)
      console.log(`  /bots   (${bots.length} requests) p50 ${f1(pct(bots, 50))} ms, p99 ${f1(pct(bots, 99))} ms, max ${f1(Math.max(...bots))} ms`)
    }
  } finally {
    await service.close()
    await smtp.stop()
    fake.child.kill('SIGTERM')
  }
}

await main()
