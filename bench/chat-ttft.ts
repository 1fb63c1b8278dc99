/**
 * bench:chat part 3: time to the first answer token through the widget's SSE route (POST /widget/chat),
 * one visitor at a time, against a fake model that takes FAKE_LLM_LATENCY_MS per call, measured in the
 * same run as one bare streamed call to that model (the floor).
 */

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : Number.NaN
}

async function firstContent(res: Response, marker: string): Promise<boolean> {
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return false
      text += decoder.decode(value, { stream: true })
      if (text.includes(marker)) return true
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
}

/** Median time to the first content token of a bare streamed call to the model (n calls, one at a time). */
export async function oneCallMs(llmUrl: string, n = 10): Promise<number> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const start = performance.now()
    const res = await fetch(`${llmUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hello there' }] }),
    })
    if (await firstContent(res, '"content":"')) out.push(performance.now() - start)
  }
  return pct(out, 50)
}

export interface TurnLog {
  decision?: string
  speculation?: string
  /** why an early answer was restarted (turn.ts restartReason) */
  speculation_why?: string
  /** how a hand-off was written: with the turn's statement, or by the hand-off's transaction (10-persist.ts) */
  handoff?: string
}

/** Runs `turns` widget turns one after another; returns the first-chunk times of the answered ones. */
export async function widgetTtft(opts: {
  base: string
  publicId: string
  questions: string[]
  turns: number
  logged: TurnLog[]
}): Promise<{ answered: number[]; all: number; outcomes: Record<string, number> }> {
  const answered: number[] = []
  const from = opts.logged.length
  const firsts: (number | null)[] = []
  for (let i = 0; i < opts.turns; i++) {
    const start = performance.now()
    const res = await fetch(`${opts.base}/widget/chat?bot_id=${opts.publicId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.1.${i % 250}.${(i >> 8) % 250}` },
      body: JSON.stringify({ message: opts.questions[i % opts.questions.length] }),
    })
    // the first chunk frame; the stream is read to its end so the turn is logged before the next starts
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    let first: number | null = null
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
      if (first === null && text.includes('"type":"chunk"')) first = performance.now() - start
    }
    firsts.push(first)
  }
  // log lines arrive asynchronously from the server's stdout
  for (let w = 0; w < 100 && opts.logged.length - from < opts.turns; w++) await new Promise((r) => setTimeout(r, 20))
  const logs = opts.logged.slice(from, from + opts.turns)
  const outcomes: Record<string, number> = {}
  logs.forEach((l, i) => {
    const key = `${l.decision ?? '?'}/${l.speculation ?? 'none'}${l.speculation_why ? `:${l.speculation_why}` : ''}`
    outcomes[key] = (outcomes[key] ?? 0) + 1
    const f = firsts[i]
    if (l.decision === 'answer' && f != null) answered.push(f)
  })
  return { answered, all: firsts.length, outcomes }
}

export const ttftLine = (label: string, ms: number[], one: number) =>
  `${label}: first answer token p50 ${pct(ms, 50).toFixed(0)} ms (${(pct(ms, 50) / one).toFixed(2)} x one call), p95 ${pct(ms, 95).toFixed(0)} ms (${(pct(ms, 95) / one).toFixed(2)} x), ${ms.length} answered turns`
