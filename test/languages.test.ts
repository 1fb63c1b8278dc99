import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type ChatCall, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi, isAnswer, REFUNDS_MD, SHIPPING_MD, system, withDocs } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { addMember } from './helpers/team.js'

/**
 * Issue #40, languages: settings (GET/PUT /tenants/me/languages), the session's language (detected once, kept),
 * cross-language retrieval (chat/stages/05-translate.ts) with a fake model in scripted-translation mode (it
 * translates known sentences, and reads the visitor's question through them when answering), the fallback.
 */
let fake: FakeLlm
let app: TestApp
let owner: Tenant
let other: Tenant
let accountDoc: string

const ACCOUNT_MD = `# Deactivating your account

To deactivate your account, open Settings > Account and choose Deactivate. Everything you stored is removed 30 days later.
`
const PASSAGE = 'open Settings > Account and choose Deactivate'
const ENGLISH = 'How do I deactivate my account?'
const QUESTIONS: Record<string, string> = {
  de: 'Wie kann ich mein Benutzerkonto deaktivieren?',
  fr: 'Comment est-ce que je peux désactiver mon compte utilisateur ?',
  es: '¿Cómo puedo desactivar mi cuenta de usuario?',
  it: 'Come posso disattivare il mio account utente?',
}
const TRANSLATIONS = new Map(Object.values(QUESTIONS).map((q) => [q, ENGLISH]))

const isTranslation = (c: ChatCall) => !c.json && system(c).includes("Translate the visitor's message into")
const hasPassage = (calls: ChatCall[]) => calls.filter(isAnswer).some((c) => c.messages.some((m) => m.content.includes(PASSAGE)))

beforeAll(async () => {
  fake = await startFakeLlm()
  app = await startApp({ env: { LLM_BASE_URL: fake.url } })
  ;[owner, other] = await Promise.all([createTenant(app), createTenant(app)])
  accountDoc = (await withDocs(app, owner, { 'account.md': ACCOUNT_MD, 'refunds.md': REFUNDS_MD, 'shipping.md': SHIPPING_MD }))['account.md']!
  fake.translateAs((text) => TRANSLATIONS.get(text))
}, 240_000)
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

async function ask(question: string, sessionId?: string) {
  const before = fake.chatCalls().length
  const r = await chatApi(app, owner).post('/chat', { question, ...(sessionId ? { session_id: sessionId } : {}) })
  expect(r.status, r.text).toBe(200)
  const log = await owner.api.get(`/chat/logs/session/${r.body.session_id}`)
  expect(log.status, log.text).toBe(200)
  const debug = [...log.body.messages].reverse().find((m: { debug: unknown }) => m.debug)?.debug
  return { body: r.body, calls: fake.chatCalls().slice(before), debug }
}

describe('language settings', { timeout: 120_000 }, () => {
  it('reads the defaults with the knowledge language detected from the indexed pages', async () => {
    const r = await owner.api.get('/tenants/me/languages')
    expect(r.status, r.text).toBe(200)
    expect(r.body).toMatchObject({ knowledge: 'en', answer: [], fallback: 'en', configured: false })
    expect(r.body.detected_knowledge).toMatchObject({ language: 'en' })
    expect(r.body.detected_knowledge.sampled).toBeGreaterThan(0)
    expect(r.body.available.map((a: { code: string }) => a.code)).toContain('de')
  })

  it('refuses an unknown code with a 422 naming it, and a fallback outside the answer languages', async () => {
    const bad = await owner.api.put('/tenants/me/languages', { knowledge: 'en', answer: ['de', 'xx'], fallback: 'en' })
    expect(bad.status).toBe(422)
    expect(bad.text).toContain("'xx'")
    expect(JSON.stringify(bad.body.detail[0].loc)).toContain('answer')
    const fb = await owner.api.put('/tenants/me/languages', { knowledge: 'en', answer: ['de'], fallback: 'fr' })
    expect(fb.status).toBe(422)
    expect(fb.text).toContain('fallback')
  })

  it('is owners’ and admins’ (an agent gets 403) and each workspace’s own', async () => {
    const agent = await addMember(app, owner, 'agent')
    expect((await agent.api.get('/tenants/me/languages')).status).toBe(403)
    const admin = await addMember(app, owner, 'admin')
    const put = await admin.api.put('/tenants/me/languages', { knowledge: 'en', answer: [], fallback: 'en' })
    expect(put.status, put.text).toBe(200)
    expect(put.body.configured).toBe(true)
    const theirs = await other.api.get('/tenants/me/languages')
    expect(theirs.body.configured).toBe(false)
    expect(theirs.body.detected_knowledge).toBeNull()
    expect((await app.api().get('/tenants/me/languages')).status).toBe(401)
  })
})

describe('cross-language retrieval', { timeout: 120_000 }, () => {
  it('an English question needs no translation', async () => {
    const { calls, debug } = await ask(ENGLISH)
    expect(calls.filter(isTranslation)).toHaveLength(0)
    expect(hasPassage(calls)).toBe(true)
    expect(debug.translation).toBeUndefined()
    expect(debug.language).toBe('en')
  })

  for (const lang of ['de', 'fr', 'es'] as const) {
    it(`a ${lang} question reaches the English passage, which is cited; the debug keeps the translation`, async () => {
      const { body, calls, debug } = await ask(QUESTIONS[lang]!)
      const translations = calls.filter(isTranslation)
      expect(translations).toHaveLength(1)
      expect(translations[0]!.body.max_tokens ?? translations[0]!.body.max_completion_tokens).toBeLessThanOrEqual(120)
      expect(hasPassage(calls)).toBe(true)
      expect(body.source_documents).toContain(accountDoc)
      expect(debug.language).toBe(lang)
      expect(debug.language_source).toBe('detected')
      expect(debug.translation).toMatchObject({ from: lang, to: 'en', used: true, query: ENGLISH })
      // the answer prompt says which language the sources are in and asks for the visitor's
      const answer = calls.find(isAnswer)!
      expect(system(answer)).toContain('The sources are written in English')
    })
  }

  it('a repeated question is translated from the cache (no second call)', async () => {
    // a question no other test asks, so its first turn is the one that translates it, whatever ran before
    const question = 'Wie deaktiviere ich mein Konto, bitte?'
    fake.translateAs((text) => (text === question ? ENGLISH : undefined))
    const first = await ask(question)
    expect(first.calls.filter(isTranslation)).toHaveLength(1)
    expect(first.debug.translation).toMatchObject({ cached: false, used: true, query: ENGLISH })
    const again = await ask(question)
    expect(again.calls.filter(isTranslation)).toHaveLength(0)
    expect(again.debug.translation).toMatchObject({ cached: true, used: true, query: ENGLISH })
    expect(hasPassage(again.calls)).toBe(true)
  })
})

describe('the early answer of a translated question (#40)', { timeout: 120_000 }, () => {
  it('starts on the question as asked while the translation is in flight, and is kept when the fused evidence agrees', async () => {
    // a multilingual embedder (modelled: the question's vectors are its English original's) finds the passage before
    // the translation lands; every model call takes a second (a loaded machine still searches first), so the guard
    // and the translation are still out then
    const question = 'Wie schalte ich mein Benutzerkonto endgültig ab?'
    fake.translateAs((text) => (text === question ? ENGLISH : undefined))
    fake.embedAs((text) => (text === question ? ENGLISH : undefined))
    fake.script(() => ({ delayMs: 1000 }))
    try {
      const { body, calls, debug } = await ask(question)
      expect(debug.translation).toMatchObject({ used: true, query: ENGLISH, cached: false })
      expect(debug.speculation).toBe('used_lexical')
      // one answer call: the one started early, asked without the translated line it had no need of
      const answers = calls.filter(isAnswer)
      expect(answers).toHaveLength(1)
      expect(system(answers[0]!)).not.toContain('machine-translated')
      expect(hasPassage(calls)).toBe(true)
      expect(body.source_documents).toContain(accountDoc)
    } finally {
      fake.reset()
      fake.translateAs((text) => TRANSLATIONS.get(text))
    }
  })

  it('is restarted when the vectors of the question as asked found another lead than the translation does', async () => {
    // a hashed-words embedder: the question as asked reaches the shipping page, the translation the account page
    const question = 'Wie schliesse ich mein Benutzerkonto für immer?'
    fake.translateAs((text) => (text === question ? ENGLISH : undefined))
    fake.embedAs((text) => (text === question ? 'How long does shipping take?' : undefined))
    fake.script(() => ({ delayMs: 1000 }))
    try {
      const { body, calls, debug } = await ask(question)
      expect(debug.translation).toMatchObject({ used: true, query: ENGLISH })
      // an early answer was started on the shipping page, and not kept (restarted as soon as the fused evidence came,
      // or found not to serve it once the guard was in too)
      expect(debug.speculation === 'restarted' || debug.speculation_restarts === 1, JSON.stringify(debug)).toBe(true)
      expect(debug.speculation).not.toBe('used_lexical')
      // the answer the visitor got was asked with the fused evidence: the account passage
      expect(hasPassage(calls.filter(isAnswer).slice(-1))).toBe(true)
      expect(body.source_documents).toContain(accountDoc)
    } finally {
      fake.reset()
      fake.translateAs((text) => TRANSLATIONS.get(text))
    }
  })
})

describe("the session's language", { timeout: 120_000 }, () => {
  it('is kept across a short "ok" or "danke"', async () => {
    const first = await ask(QUESTIONS.de!)
    const sid = first.body.session_id
    const s1 = await owner.api.get(`/chat/sessions?limit=200`)
    const row = s1.body.sessions.find((s: { session_id: string }) => s.session_id === sid)
    expect(row).toMatchObject({ language: 'de', language_source: 'detected' })
    for (const short of ['ok', 'danke']) {
      const r = await ask(short, sid)
      expect(r.debug.language).toBe('de')
      expect(r.debug.language_source).toBe('detected')
    }
  })

  it('a short first message waits: nothing is stored until a clear one comes', async () => {
    const r = await ask('ok')
    const s = await owner.api.get(`/chat/history/${r.body.session_id}`)
    expect(s.body.language).toBeNull()
    const next = await ask(QUESTIONS.fr!, r.body.session_id)
    expect(next.debug.language).toBe('fr')
  })

  it("a language outside `answer` gets the fallback, said once in the visitor's language", async () => {
    const put = await owner.api.put('/tenants/me/languages', { knowledge: 'en', answer: ['en', 'de', 'fr', 'es'], fallback: 'en' })
    expect(put.status, put.text).toBe(200)
    try {
      const first = await ask(QUESTIONS.it!)
      expect(first.debug.language).toBe('en')
      expect(first.debug.language_source).toBe('fallback')
      expect(first.body.text).toMatch(/^Posso rispondere solo in inglese/)
      expect(first.calls.filter(isTranslation)).toHaveLength(0)
      const again = await ask('Come posso disattivare il mio account?', first.body.session_id)
      expect(again.debug.language).toBe('en')
      expect(again.body.text).not.toMatch(/Posso rispondere/)
    } finally {
      await owner.api.put('/tenants/me/languages', { knowledge: 'en', answer: [], fallback: 'en' })
    }
  })
})

/** The widget's side (#40): its texts in the session's language, and the language menu's choice kept by the session. */
describe("the widget's language", { timeout: 120_000 }, () => {
  async function widgetChat(query: string, body: unknown): Promise<Record<string, any>> {
    const res = await fetch(`${app.url}/widget/chat?${query}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    expect(res.headers.get('content-type') ?? '', await res.clone().text()).toMatch(/^text\/event-stream/)
    const frames = (await res.text())
      .split('\n\n')
      .filter((b) => b.startsWith('data: '))
      .map((b) => JSON.parse(b.slice(6)))
    const done = frames.find((f) => f.type === 'done')
    expect(done, JSON.stringify(frames)).toBeTruthy()
    return done
  }
  const sessionRow = async (sid: string) =>
    (await owner.api.get('/chat/sessions?limit=200')).body.sessions.find((s: { session_id: string }) => s.session_id === sid)

  it('config offers the answer languages as a menu and sends the texts in the asked language', async () => {
    const all = await app.api().get(`/widget/config?bot_id=${owner.bot.public_id}&locale=nl-BE`)
    expect(all.status, all.text).toBe(200)
    expect(all.body.languages).toEqual(['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'ru'])
    expect(all.body.locale).toBe('nl')
    expect(all.body.labels.language).toBe('Taal')
    expect(all.body.labels.confirm).toBe('Bevestigen')
    await owner.api.put('/tenants/me/languages', { knowledge: 'en', answer: ['de', 'en'], fallback: 'en' })
    try {
      const some = await app.api().get(`/widget/config?bot_id=${owner.bot.public_id}`)
      expect(some.body.languages).toEqual(['en', 'de'])
    } finally {
      await owner.api.put('/tenants/me/languages', { knowledge: 'en', answer: [], fallback: 'en' })
    }
  })

  it('the done frame names the detected language; a language chosen in the menu becomes the session’s (visitor), even over a detected one', async () => {
    const q = `bot_id=${owner.bot.public_id}`
    const first = await widgetChat(q, { message: QUESTIONS.de })
    expect(first.language).toBe('de')
    expect(await sessionRow(first.session_id)).toMatchObject({ language: 'de', language_source: 'detected' })
    // the visitor picks French: from this message on the session speaks it, and says so to the widget
    const picked = await widgetChat(`${q}&session_id=${first.session_id}`, { message: 'ok', language: 'fr' })
    expect(picked.language).toBe('fr')
    expect(await sessionRow(first.session_id)).toMatchObject({ language: 'fr', language_source: 'visitor' })
    // an unknown code is no choice: the session keeps its language
    const odd = await widgetChat(`${q}&session_id=${first.session_id}`, { message: 'merci', language: 'xx' })
    expect(odd.language).toBe('fr')
    const long = await fetch(`${app.url}/widget/chat?${q}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'hi', language: 'x'.repeat(40) }),
    })
    expect(long.status).toBe(422)
  })
})

/** Operators (#40): the ticket names the conversation's language; a message can be sent translated into it, the original kept for the team. */
describe("an operator's message sent translated", { timeout: 120_000 }, () => {
  const WRITTEN = 'Your account is deactivated now.'
  const GERMAN = 'Ihr Konto ist jetzt deaktiviert.'

  async function germanTicket() {
    const visitor = app.api()
    const bot = owner.bot.public_id
    const sid = (await visitor.post('/widget/session/init', { bot_id: bot })).body.session_id as string
    const said = await fetch(`${app.url}/widget/chat?bot_id=${bot}&session_id=${sid}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: QUESTIONS.de }),
    })
    await said.text()
    const esc = await visitor.post(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: 'Bitte helfen Sie mir' })
    expect(esc.status, esc.text).toBe(200)
    const ticket = (await owner.api.get('/escalations')).body.tickets.find((x: { session_id: string }) => x.session_id === sid)
    return { visitor, bot, sid, ticket: ticket as { id: string; language: string | null } }
  }

  it("is sent in the visitor's language; the team keeps the original beside it", async () => {
    fake.translateAs((text) => (text === WRITTEN ? GERMAN : undefined))
    const { visitor, bot, sid, ticket } = await germanTicket()
    expect(ticket.language).toBe('de')
    expect((await owner.api.get(`/escalations/${ticket.id}`)).body.language).toBe('de')
    const before = fake.chatCalls().length
    const sent = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: WRITTEN, translate: true })
    expect(sent.status, sent.text).toBe(201)
    expect(sent.body).toMatchObject({ content: GERMAN, original: WRITTEN, language: 'de', internal: false })
    const call = fake
      .chatCalls()
      .slice(before)
      .find((c) => system(c).includes("Translate the support team's message into German"))
    expect(call, 'one translation call into German').toBeTruthy()
    // the visitor reads German only
    const h = await visitor.get(`/widget/history?bot_id=${bot}&session_id=${sid}`)
    expect(h.body.messages.at(-1)).toMatchObject({ id: sent.body.id, content: GERMAN, from_operator: true })
    // the history says the conversation's language: a reloaded widget shows its texts in it (#52)
    expect(h.body.language).toBe('de')
    expect(JSON.stringify(h.body)).not.toContain(WRITTEN)
    // the team sees what was written, as a note beside the message
    const t = await owner.api.get(`/escalations/${ticket.id}`)
    expect(t.body.notes.map((n: { content: string }) => n.content).join('\n')).toContain(WRITTEN)
    expect(t.body.transcript.map((m: { content: string }) => m.content)).toContain(GERMAN)
  })

  it('says no translation happened when the model gives the words back unchanged (#52): sent as written, no note', async () => {
    const UNTRANSLATED = 'Your export is ready in the dashboard now.'
    const { visitor, bot, sid, ticket } = await germanTicket()
    expect(ticket.language).toBe('de')
    // no translation is scripted for these words: the model returns them as written
    const sent = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: UNTRANSLATED, translate: true })
    expect(sent.status, sent.text).toBe(201)
    expect(sent.body.content).toBe(UNTRANSLATED)
    expect(sent.body.translated).toBe(false)
    expect(sent.body.original).toBeUndefined()
    expect(sent.body.language).toBeUndefined()
    const t = await owner.api.get(`/escalations/${ticket.id}`)
    expect(t.body.notes.map((n: { content: string }) => n.content).join('\n')).not.toContain('sent translated')
    const h = await visitor.get(`/widget/history?bot_id=${bot}&session_id=${sid}`)
    expect(h.body.messages.at(-1)).toMatchObject({ id: sent.body.id, content: UNTRANSLATED, from_operator: true })
    // a real translation still says so
    fake.translateAs((text) => (text === WRITTEN ? GERMAN : undefined))
    const real = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: WRITTEN, translate: true })
    expect(real.body).toMatchObject({ content: GERMAN, original: WRITTEN, language: 'de', translated: true })
  })

  it('refuses before the language is known and when the model fails, sending nothing', async () => {
    const visitor = app.api()
    const bot = owner.bot.public_id
    const sid = (await visitor.post('/widget/session/init', { bot_id: bot })).body.session_id as string
    await visitor.post(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: 'help' })
    const unknown = (await owner.api.get('/escalations')).body.tickets.find((x: { session_id: string }) => x.session_id === sid)
    expect(unknown.language).toBeNull()
    const refused = await owner.api.post(`/escalations/${unknown.id}/messages`, { content: WRITTEN, translate: true })
    expect(refused.status).toBe(409)
    expect(refused.body.detail.code).toBe('visitor_language_unknown')

    const { visitor: v2, sid: sid2, ticket } = await germanTicket()
    fake.fail(500, { match: (r) => JSON.stringify(r.body ?? {}).includes("Translate the support team's message") })
    try {
      const failed = await owner.api.post(`/escalations/${ticket.id}/messages`, { content: WRITTEN, translate: true })
      expect(failed.status, failed.text).toBe(502)
      expect(failed.body.detail.code).toBe('translation_failed')
      expect(failed.text).not.toContain(WRITTEN)
    } finally {
      fake.reset()
      fake.translateAs((text) => TRANSLATIONS.get(text))
    }
    const h = await v2.get(`/widget/history?bot_id=${bot}&session_id=${sid2}`)
    expect(h.body.messages.some((m: { from_operator?: boolean }) => m.from_operator)).toBe(false)
    // before the language is known the history says so
    expect((await visitor.get(`/widget/history?bot_id=${bot}&session_id=${sid}`)).body.language).toBeNull()
    // another workspace cannot reach the ticket
    expect((await other.api.post(`/escalations/${ticket.id}/messages`, { content: WRITTEN, translate: true })).status).toBe(404)
  })
})
