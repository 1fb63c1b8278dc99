import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { makeJpeg, makePng, uploadAttachment, widgetChat, widgetSession } from './helpers/attachments.js'
import { callsSince, isAnswer, REFUNDS_MD, withDocs } from './helpers/chat.js'
import { createTenant, type Tenant } from './helpers/factories.js'
import { makePdf, makeZipBombDocx } from './fixtures/files.js'

/**
 * Attachments (issue 54, contract "Attachments"): a visitor's files typed by their bytes, stripped of metadata,
 * refused when hostile, claimed once by a message, and given to the model as image parts or as text.
 */

// a loaded machine (the suite's other files, four engineers) makes a turn with a model's refusal take over 30 s
vi.setConfig({ testTimeout: 120_000 })

let t: TestApp
let fake: FakeLlm
let owner: Tenant
beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, ATTACHMENT_MAX_BYTES: String(2 * 1024 * 1024) } })
  owner = await createTenant(t)
})
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

const GPS = 'GPSLatitude 52.5200 N GPSLongitude 13.4050 E'

describe('POST /widget/attachments', () => {
  it('takes a PNG and a JPEG by their bytes, and stores them without EXIF, GPS or text chunks', async () => {
    const api = t.api()
    const sid = await widgetSession(api, owner.bot.public_id)
    const png = await uploadAttachment(api, owner.bot.public_id, sid, makePng({ meta: GPS }), 'screen.txt', 'text/plain')
    expect(png.status, png.text).toBe(201)
    expect(png.body).toEqual({ id: expect.any(String), name: 'screen.txt', content_type: 'image/png', size: expect.any(Number), kind: 'image' })
    const jpg = await uploadAttachment(api, owner.bot.public_id, sid, makeJpeg(GPS), 'photo.jpg', 'image/jpeg')
    expect(jpg.status, jpg.text).toBe(201)
    expect(jpg.body.content_type).toBe('image/jpeg')

    for (const id of [png.body.id, jpg.body.id]) {
      const res = await fetch(`${t.url}/attachments/${id}`, { headers: { authorization: `Bearer ${owner.token}` } })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="/)
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      const bytes = Buffer.from(await res.arrayBuffer())
      expect(bytes.includes('GPSLatitude')).toBe(false)
      expect(bytes.includes('Exif')).toBe(false)
      expect(bytes.includes('eXIf')).toBe(false)
      expect(bytes.length).toBe(id === png.body.id ? png.body.size : jpg.body.size)
    }
    // the stored PNG is still a whole PNG: header, pixels and end
    const stored = Buffer.from(await (await fetch(`${t.url}/widget/attachments/${png.body.id}?bot_id=${owner.bot.public_id}&session_id=${sid}`)).arrayBuffer())
    expect(stored.subarray(0, 8)).toEqual(makePng().subarray(0, 8))
    expect(stored.includes('IDAT')).toBe(true)
    expect(stored.includes('IEND')).toBe(true)
  })

  it('refuses SVG, HTML and a renamed executable with 415, and a file over ATTACHMENT_MAX_BYTES with 413', async () => {
    const api = t.api()
    const sid = await widgetSession(api, owner.bot.public_id)
    const svg = '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    const html = '<!doctype html><html><body><script>alert(document.cookie)</script></body></html>'
    const exe = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(500, 0x90)])
    for (const [bytes, name] of [
      [Buffer.from(svg), 'logo.svg'],
      [Buffer.from(html), 'page.txt'],
      [exe, 'screenshot.png'],
    ] as const) {
      const r = await uploadAttachment(api, owner.bot.public_id, sid, bytes, name, 'image/png')
      expect(r.status, `${name}: ${r.text}`).toBe(415)
      expect(r.body.detail.code).toBe('unsupported_type')
    }
    const big = await uploadAttachment(api, owner.bot.public_id, sid, makePng({ padBytes: 2 * 1024 * 1024 + 10 }), 'big.png', 'image/png')
    expect(big.status, big.text).toBe(413)
  })

  it('refuses a PNG declaring 50,000 x 50,000 pixels and a DOCX expanding past the cap in well under a second, /health unaffected', async () => {
    const api = t.api()
    const sid = await widgetSession(api, owner.bot.public_id)
    const bomb = makePng({ declared: [50_000, 50_000] })
    const zipBomb = makeZipBombDocx(100)
    for (const [bytes, name] of [
      [bomb, 'bomb.png'],
      [zipBomb, 'report.docx'],
    ] as const) {
      const started = performance.now()
      const health = fetch(`${t.url}/health`)
      const r = await uploadAttachment(api, owner.bot.public_id, sid, bytes, name)
      const ms = performance.now() - started
      expect(r.status, r.text).toBe(413)
      expect(ms).toBeLessThan(1000)
      expect((await health).status).toBe(200)
    }
  })

  it("is 404 for another bot's session and for another workspace's attachment", async () => {
    const api = t.api()
    const sid = await widgetSession(api, owner.bot.public_id)
    const up = await uploadAttachment(api, owner.bot.public_id, sid, makePng(), 'a.png')
    expect(up.status).toBe(201)
    const other = await createTenant(t)
    const foreign = await fetch(`${t.url}/attachments/${up.body.id}`, { headers: { authorization: `Bearer ${other.token}` } })
    expect(foreign.status).toBe(404)
    const otherSid = await widgetSession(api, other.bot.public_id)
    expect((await uploadAttachment(api, owner.bot.public_id, otherSid, makePng(), 'a.png')).status).toBe(404)
    const viaOther = await fetch(`${t.url}/widget/attachments/${up.body.id}?bot_id=${other.bot.public_id}&session_id=${otherSid}`)
    expect(viaOther.status).toBe(404)
    const otherSession = await widgetSession(api, owner.bot.public_id)
    expect((await fetch(`${t.url}/widget/attachments/${up.body.id}?bot_id=${owner.bot.public_id}&session_id=${otherSession}`)).status).toBe(404)
  })
})

describe('a message with attachments', () => {
  beforeAll(async () => {
    await withDocs(t, owner, { 'refunds.md': REFUNDS_MD })
  })

  it('gives the model every image of the message as an image part (three of three), and claims them once', async () => {
    const api = t.api()
    const sid = await widgetSession(api, owner.bot.public_id)
    const ids: string[] = []
    for (const n of [1, 2, 3]) ids.push((await uploadAttachment(api, owner.bot.public_id, sid, makePng({ width: n + 1 }), `shot-${n}.png`)).body.id)
    const from = fake.chatCalls().length
    const r = await widgetChat(api, owner.bot.public_id, sid, { message: 'How long do refunds take? My screens show the error.', attachment_ids: ids })
    expect(r.frames.at(-1)?.type, JSON.stringify(r.frames.at(-1))).toBe('done')
    const answer = callsSince(fake, from).find(isAnswer)!
    expect(answer, JSON.stringify(r.frames.at(-1))).toBeDefined()
    const user = answer.messages.at(-1)!
    expect(user.images).toHaveLength(3)
    for (const url of user.images!) expect(url).toMatch(/^data:image\/png;base64,/)
    // each the file as stored (metadata removed), whole, in the message's order (its base64 written into the request)
    for (const [i, url] of user.images!.entries()) {
      const stored = await fetch(`${t.url}/widget/attachments/${ids[i]}?bot_id=${owner.bot.public_id}&session_id=${sid}`)
      expect(stored.status).toBe(200)
      expect(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64').equals(Buffer.from(await stored.arrayBuffer()))).toBe(true)
    }
    expect(user.content).toContain('[image: shot-1.png]')
    expect(user.content).toContain('[image: shot-3.png]')

    // the team and the visitor see them under the visitor's message: logs, the widget's history, the ticket's thread
    const meta = (ids as string[]).map((id, i) => ({ id, name: `shot-${i + 1}.png`, content_type: 'image/png', size: expect.any(Number), kind: 'image' }))
    const log = await owner.api.get(`/chat/logs/session/${sid}`)
    expect(log.status, log.text).toBe(200)
    expect(log.body.messages[0]).toMatchObject({ role: 'user', attachments: meta })
    expect(log.body.messages[0].content).toBe('How long do refunds take? My screens show the error.')
    expect(log.body.messages[1].attachments).toEqual([])
    const history = await api.get(`/widget/history?bot_id=${owner.bot.public_id}&session_id=${sid}`)
    expect(history.body.messages[0].attachments).toEqual(meta)
    const esc = await api.post(`/widget/escalate?bot_id=${owner.bot.public_id}&session_id=${sid}`, {})
    expect(esc.status, esc.text).toBe(200)
    const list = await owner.api.get('/escalations')
    const ticket = list.body.tickets.find((x: { ticket_number: string }) => x.ticket_number === esc.body.ticket_number)
    const detail = await owner.api.get(`/escalations/${ticket.id}`)
    expect(detail.body.transcript.find((m: { role: string }) => m.role === 'user').attachments).toEqual(meta)

    // sent once: the same files again are refused, as a coded error
    const again = await widgetChat(api, owner.bot.public_id, sid, { message: 'and again', attachment_ids: ids })
    expect(again.frames.at(-1)).toMatchObject({ type: 'error', code: 'attachments_unavailable' })
  })

  it("puts a PDF's text into the prompt and the search: a message of the file alone finds the page it is about", async () => {
    const api = t.api()
    const sid = await widgetSession(api, owner.bot.public_id)
    const pdf = await uploadAttachment(api, owner.bot.public_id, sid, await makePdf({ pages: 1, marker: 'zebracorn' }), 'invoice.pdf')
    expect(pdf.status, pdf.text).toBe(201)
    expect(pdf.body).toMatchObject({ kind: 'document', content_type: 'application/pdf', name: 'invoice.pdf' })
    const from = fake.chatCalls().length
    const r = await widgetChat(api, owner.bot.public_id, sid, { message: '', attachment_ids: [pdf.body.id] })
    expect(r.frames.at(-1)?.type, JSON.stringify(r.frames.at(-1))).toBe('done')
    const answer = callsSince(fake, from).find(isAnswer)!
    const user = answer.messages.at(-1)!
    expect(user.content).toContain('zebracorn')
    expect(user.content).toContain('[document: invoice.pdf] (its text is in the message)')
    expect(user.images).toBeUndefined()
    // retrieval searched with the file's words (refunds): the refunds page is a source
    expect(answer.messages[0]!.content).toContain('Refunds are processed within 5 business days')
  })
})

describe('a chat model that refuses image parts', () => {
  let t2: TestApp
  let fake2: FakeLlm
  beforeAll(async () => {
    fake2 = await startFakeLlm({ server: { refuseImages: true } })
    t2 = await startApp({ env: { LLM_BASE_URL: fake2.url } })
  })
  afterAll(async () => {
    await t2?.close()
    await fake2?.close()
  })

  it('gets the text instead ("[image: name]"), learnt once, and /llm/status says vision: false', async () => {
    const tenant = await createTenant(t2)
    await withDocs(t2, tenant, { 'refunds.md': REFUNDS_MD })
    const api = t2.api()
    for (let i = 0; i < 2; i++) {
      const sid = await widgetSession(api, tenant.bot.public_id)
      const up = await uploadAttachment(api, tenant.bot.public_id, sid, makePng(), `error-${i}.png`)
      const from = fake2.chatCalls().length
      const r = await widgetChat(api, tenant.bot.public_id, sid, { message: 'How long do refunds take?', attachment_ids: [up.body.id] })
      expect(r.frames.at(-1)?.type, JSON.stringify(r.frames.at(-1))).toBe('done')
      // the answer as the server took it (the one refused request, with its image part, is counted below)
      const answer = callsSince(fake2, from).find((c) => isAnswer(c) && c.request.status === 200)!
      expect(answer.messages.at(-1)!.content).toContain(`[image: error-${i}.png]`)
      expect(answer.messages.at(-1)!.images).toBeUndefined()
    }
    // one refused request in all: the second turn went as text at once
    expect(fake2.requests.filter((q) => q.status === 400)).toHaveLength(1)
    const status = await tenant.api.get('/llm/status')
    expect(status.status, status.text).toBe(200)
    expect(status.body.capabilities.vision).toBe(false)
    expect(status.body.checks.find((c: { name: string }) => c.name === 'vision')).toMatchObject({ ok: false })
  })
})

describe('a stored file', () => {
  it('is kept in pieces that come back whole and go with it: by retention, and with its conversation', async () => {
    const api = t.api()
    const bot = owner.bot.public_id
    const { db } = t.ctx
    const pieces = (id: string) =>
      db.selectFrom('attachment_chunks').select('seq').where('tenant_id', '=', owner.tenantId).where('attachment_id', '=', id).execute()
    // 1.3 MB: its head and three pieces of at most 512 KB
    const big = makePng({ width: 8, height: 8, padBytes: 1_300_000 })
    const sid = await widgetSession(api, bot)
    const up = await uploadAttachment(api, bot, sid, big, 'big.png')
    expect(up.status, up.text).toBe(201)
    expect((await pieces(up.body.id)).map((p) => p.seq).sort()).toEqual([0, 1, 2, 3])
    const back = await fetch(`${t.url}/widget/attachments/${up.body.id}?bot_id=${bot}&session_id=${sid}`)
    expect(back.status).toBe(200)
    expect(Buffer.from(await back.arrayBuffer()).equals(big)).toBe(true)

    // with its conversation
    const sid2 = await widgetSession(api, bot)
    const small = await uploadAttachment(api, bot, sid2, makePng({ padBytes: 600_000 }), 'small.png')
    expect(small.status, small.text).toBe(201)
    expect((await pieces(small.body.id)).length).toBe(3)
    await db.deleteFrom('chat_sessions').where('tenant_id', '=', owner.tenantId).where('id', '=', sid2).execute()
    expect(await pieces(small.body.id)).toEqual([])

    // by retention: a file no message took within a day (this test runs last in its file: the clock moves on)
    t.clock.advance(2 * 86_400_000)
    await t.ctx.queue.enqueue('attachments.retention', {})
    await expect.poll(async () => (await pieces(up.body.id)).length, { timeout: 30_000 }).toBe(0)
    expect((await fetch(`${t.url}/widget/attachments/${up.body.id}?bot_id=${bot}&session_id=${sid}`)).status).toBe(404)
  })
})
