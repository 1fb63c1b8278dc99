import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from './helpers/app.js'
import { createTenant, type Tenant } from './helpers/factories.js'

let t: TestApp
let owner: Tenant
beforeAll(async () => {
  t = await startApp()
  owner = await createTenant(t)
})
afterAll(() => t?.close())

/** One raw HTTP/1.1 exchange, for requests fetch will not send as they are (huge headers, broken lines). */
function raw(request: string): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(t.url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    const parts: Buffer[] = []
    socket.on('data', (d) => parts.push(d))
    socket.on('error', (err) => (parts.length ? undefined : reject(err)))
    socket.on('close', () => {
      const text = Buffer.concat(parts).toString('utf8')
      const [head = '', ...rest] = text.split('\r\n\r\n')
      resolve({ status: Number(head.split(' ')[1]), headers: head, body: rest.join('\r\n\r\n') })
    })
    socket.write(request)
  })
}

const MARKER = 'echo-marker-7f3a'

describe('transport-level errors use the {detail} envelope and never echo the request', () => {
  it('414 for a path parameter of 3,000 characters', async () => {
    const long = MARKER + 'a'.repeat(3000)
    const r = await owner.api.get(`/bots/${long}`)
    expect(r.status).toBe(414)
    expect(r.body).toEqual({ detail: expect.any(String) })
    expect(r.text).not.toContain(MARKER)
    expect(r.text).not.toContain('FST_ERR')
    expect(r.headers.get('x-request-id')).toBeTruthy()
  })

  it('400 for a malformed percent-encoding in the path', async () => {
    const r = await owner.api.get(`/bots/${MARKER}%E0%A4%A`)
    expect(r.status).toBe(400)
    expect(r.body).toEqual({ detail: expect.any(String) })
    expect(r.text).not.toContain(MARKER)
  })

  it('431 for 100 KB of headers, answered as JSON on the raw connection', async () => {
    const r = await raw(`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${MARKER}${'b'.repeat(100_000)}\r\n\r\n`)
    expect(r.status).toBe(431)
    expect(r.headers).toMatch(/content-type: application\/json/i)
    expect(JSON.parse(r.body)).toEqual({ detail: expect.any(String) })
    expect(r.body).not.toContain(MARKER)
  })

  it('400 for a malformed request line', async () => {
    const r = await raw(`GET /${MARKER} HTTP/9.9 nonsense\r\n\r\n`)
    expect(r.status).toBe(400)
    expect(JSON.parse(r.body)).toEqual({ detail: expect.any(String) })
    expect(r.body).not.toContain(MARKER)
  })

  it('413 for a body over the limit', async () => {
    const r = await owner.api.post('/bots', JSON.stringify({ name: MARKER, agent_instructions: 'x'.repeat(2 * 1024 * 1024) }))
    expect(r.status).toBe(413)
    expect(r.body).toEqual({ detail: expect.stringMatching(/too large/) })
    expect(r.text).not.toContain(MARKER)
  })

  it('415 for an unsupported content type, without quoting it', async () => {
    const r = await owner.api.post('/bots', `<name>${MARKER}</name>`, { 'content-type': `application/x-${MARKER}` })
    expect(r.status).toBe(415)
    expect(r.body).toEqual({ detail: expect.stringMatching(/application\/json/) })
    expect(r.text).not.toContain(MARKER)
  })

  it('422 for broken JSON, without quoting it', async () => {
    const r = await owner.api.post('/bots', `{"name": "${MARKER}`, { 'content-type': 'application/json' })
    expect(r.status).toBe(422)
    expect(r.body.detail[0]).toEqual({ loc: ['body'], msg: expect.any(String), type: expect.any(String) })
    expect(r.text).not.toContain(MARKER)
  })

  it('400 for a Content-Length that does not match the body', async () => {
    const r = await raw(
      `POST /bots HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${owner.api.token}\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{"name":"${MARKER}"}`,
    )
    expect(r.status).toBeGreaterThanOrEqual(400)
    expect(r.status).toBeLessThan(500)
    expect(r.body).not.toContain(MARKER)
    expect(JSON.parse(r.body)).toHaveProperty('detail')
  })
})

describe('422 bodies name the allowed values', () => {
  it('a wrong trigger on /widget/escalate is one error naming user_request, answer_rejected and llm_unavailable', async () => {
    const r = await t.api().post(`/widget/escalate?bot_id=${owner.bot.public_id}&session_id=${crypto.randomUUID()}`, { trigger: 'button' })
    expect(r.status).toBe(422)
    expect(r.body).toEqual({
      detail: [{ loc: ['body', 'trigger'], msg: "Input should be 'user_request', 'answer_rejected' or 'llm_unavailable'", type: 'enum' }],
    })
  })

  it('enum values in a query and a body, and formats, are named too', async () => {
    const status = await owner.api.get('/escalations?status=bogus')
    expect(status.status).toBe(422)
    expect(status.body.detail).toHaveLength(1)
    expect(status.body.detail[0]).toMatchObject({ loc: ['query', 'status'], type: 'enum' })
    expect(status.body.detail[0].msg).toMatch(/'open', 'in_progress' or 'resolved'/)
    expect(status.text).not.toContain('bogus')

    const level = await owner.api.put(`/bots/${owner.bot.id}/disclosure`, { level: 'chatty' })
    expect(level.status).toBe(422)
    expect(level.body.detail).toEqual([{ loc: ['body', 'level'], msg: "Input should be 'detailed', 'standard' or 'corporate'", type: 'enum' }])

    const email = await t.api().post('/auth/register', { email: `not-an-email-${MARKER}`, password: 'Corr3ct-Horse!' })
    expect(email.status).toBe(422)
    expect(email.body.detail[0]).toMatchObject({ loc: ['body', 'email'], msg: expect.stringMatching(/e-mail address \(name@example\.com\)/) })
    expect(email.text).not.toContain(MARKER)
  })
})
