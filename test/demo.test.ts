import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { sseFrames } from './helpers/chat.js'
import { type DemoProcess, freePort, startDemo } from './helpers/demo-process.js'
import { Api } from './helpers/http.js'

/**
 * `npm run demo` as a newcomer runs it (scripts/demo.ts under tsx, its own process, a fresh DATA_DIR): it
 * must come up, answer a question with a citation over HTTP as the widget asks it, and a second run on the
 * same folder must find its data instead of adding it again.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'scb-demo-'))
const demos: DemoProcess[] = []
afterAll(async () => {
  await Promise.all(demos.map((d) => d.stop()))
  rmSync(dataDir, { recursive: true, force: true })
})

/** The demo over this test's own folder and ports, twice; the suite's DATABASE_URL given to it, which it must ignore. */
async function runDemo(port: number, pagePort: number) {
  const demo = await startDemo({ dataDir, port, pagePort, env: process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {} })
  demos.push(demo)
  expect(demo.botId, demo.out).toBeTruthy()
  return demo
}

/** The fact each of the demo page's suggested questions must be answered with. */
const KEY_FACTS: Record<string, RegExp> = {
  'Which file types can I upload?': /PDF, Markdown/,
  'How long does the old API key keep working after a rotation?': /24 hours/,
  'When is an operator reply sent by e-mail?': /10 minutes/,
  'Can I use the widget on localhost?': /localhost/,
}

async function counts(api: Api) {
  const docs = await api.get('/documents/sources')
  const faq = await api.get('/knowledge/faq')
  const bots = await api.get('/bots')
  return {
    sources: docs.body.url_sources.length,
    pages: docs.body.url_sources[0]?.pages_indexed,
    faqs: faq.body.total,
    approved: faq.body.items.filter((i: { approved: boolean }) => i.approved).length,
    bots: bots.body.items.length,
  }
}

it('seeds a demo workspace, answers with a citation like the widget, and a second run duplicates nothing', async () => {
  const [port, pagePort] = [await freePort(), await freePort()]
  const base = `http://127.0.0.1:${port}`
  const first = await runDemo(port, pagePort)
  expect(first.out).toMatch(/Dashboard\s+http:\/\/localhost:\d+\/app\//)
  expect(first.out).toContain('demo@example.com')
  const password = /demo@example\.com \/ (\S+)/.exec(first.out)![1]!

  // The demo page embeds the loader with the bot's public id; the loader is served.
  const page = await (await fetch(`http://127.0.0.1:${pagePort}/`)).text()
  expect(page).toContain(`src="http://localhost:${port}/embed.js" data-bot-id="${first.botId}"`)
  expect((await fetch(`${base}/embed.js`)).status).toBe(200)

  // A visitor on the demo page (its Origin must be allowed by the bot) asks; the answer cites a help page.
  const visitor = new Api(base)
  const origin = { origin: `http://localhost:${pagePort}` }
  const init = await visitor.post('/widget/session/init', { bot_id: first.botId }, origin)
  expect(init.status, init.text).toBe(200)
  const chat = await visitor.post(
    `/widget/chat?bot_id=${first.botId}&session_id=${init.body.session_id}`,
    { message: 'How often can I refresh a crawled website?' },
    origin,
  )
  expect(chat.headers.get('access-control-allow-origin')).toBe(origin.origin)
  const done = sseFrames(chat.text).find((f) => f.type === 'done')
  expect(done, chat.text).toBeTruthy()
  expect(done.text).toMatch(/crawl/i)
  expect(done.sources).toContainEqual({ title: expect.any(String), url: `http://127.0.0.1:${pagePort}/help/knowledge.html` })

  // Every question the demo page suggests is answered with a cited help page, not handed off (issue 21).
  const suggested = [...page.matchAll(/<li>([^<]+\?)<\/li>/g)].map((m) => m[1]!)
  expect(suggested.length).toBe(4)
  for (const question of suggested) {
    const s = await visitor.post('/widget/session/init', { bot_id: first.botId }, origin)
    const r = await visitor.post(`/widget/chat?bot_id=${first.botId}&session_id=${s.body.session_id}`, { message: question }, origin)
    const end = sseFrames(r.text).find((f) => f.type === 'done')
    expect(end?.sources?.length, `${question} -> ${end?.text}`).toBeGreaterThan(0)
    // ...with its key fact (issue 37: one of them was answered without it)
    const fact = KEY_FACTS[question]
    expect(fact, `a key fact for the suggested question "${question}"`).toBeDefined()
    expect(end.text, question).toMatch(fact!)
  }
  // The demo model judges relevance from the help center: a covered question is answered and cited, an
  // off-topic one is declined without a ticket (issue 37: both were handed off; the snippet's answer was lost when
  // the prompt dropped the HTML inside its code span).
  const asked = async (message: string) => {
    const s = await visitor.post('/widget/session/init', { bot_id: first.botId }, origin)
    const r = await visitor.post(`/widget/chat?bot_id=${first.botId}&session_id=${s.body.session_id}`, { message }, origin)
    return sseFrames(r.text)
  }
  const snippet = (await asked('Where do I find the embed snippet?')).find((f) => f.type === 'done')
  expect(snippet?.sources?.length, snippet?.text).toBeGreaterThan(0)
  expect(snippet.text).toMatch(/embed\.js/)
  const pizza = await asked('What is the best pizza topping?')
  expect(
    pizza.find((f) => f.type === 'done'),
    JSON.stringify(pizza),
  ).toBeTruthy()
  expect(
    pizza.filter((f) => f.ticket_number || f.sources?.length),
    JSON.stringify(pizza),
  ).toEqual([])

  const owner = new Api(base)
  const login = await owner.post('/auth/login', { email: 'demo@example.com', password })
  expect(login.status).toBe(200)
  owner.withToken(login.body.token)
  const before = await counts(owner)
  expect(before).toEqual({ sources: 1, pages: 7, faqs: 1, approved: 1, bots: 1 })
  expect(await first.stop()).toBe(0)

  const second = await runDemo(port, pagePort)
  expect(second.botId).toBe(first.botId)
  const again = new Api(base)
  again.withToken((await again.post('/auth/login', { email: 'demo@example.com', password })).body.token)
  expect(await counts(again)).toEqual(before)
  expect(await second.stop()).toBe(0)
}, 900_000)
