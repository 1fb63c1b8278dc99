import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signIdentityToken } from '../../src/modules/tenants/identity-token.fns.js'
import { json, WorkspaceApi } from '../fakes/workspace-api.js'
import type { Tenant } from '../helpers/factories.js'
import { addMember } from '../helpers/team.js'
import { until } from '../helpers/wait.js'
import { expectScreenHealthy, openScreen, screenshot, signedInTenant, startDashboardEnv, watchedPage, type DashboardEnv } from './dashboard-harness.js'
import { hasChromium, hostPageHtml, serveHostPage, type HostPage } from './harness.js'

/**
 * Actions in a real browser: an owner defines one on the dashboard (a 422 shown at the field, a dry run with
 * the secret masked, the enable switch), and a signed-in visitor approves a write action on the widget's
 * confirmation card, where a double click still makes one call to the workspace's API.
 */
const suite = hasChromium ? describe : describe.skip
const SECRET = 'tok_live_supersecret_9876'

suite('actions in Chromium', { timeout: 120_000 }, () => {
  let env: DashboardEnv
  let tenant: Tenant
  let api: WorkspaceApi
  let site: HostPage

  beforeAll(async () => {
    env = await startDashboardEnv({}, { isolated: true })
    tenant = await signedInTenant(env)
    api = await new WorkspaceApi().start()
  }, 120_000)
  afterAll(async () => {
    await site?.close()
    await api?.close()
    await env?.close()
  })

  it('creates an action (a bad name refused at its field), dry-runs it with the secret masked, and enables it', async () => {
    const w = await watchedPage(env)
    const { page } = w
    await openScreen(page, env, '/actions', 'Actions')
    await page.getByText('No actions yet').waitFor()
    await expectScreenHealthy(w, 'actions (empty)')

    await page.getByRole('button', { name: 'New action' }).click()
    const form = page.getByRole('form', { name: 'New action' })
    await form.getByLabel('Name', { exact: true }).fill('Order-Status')
    await form.getByLabel('Description').fill('Look up the status of an order by its order number.')
    await form.getByLabel('URL template').fill(`${api.url}/orders/{order_number}`)
    await form.getByLabel('Headers').fill('Authorization: Bearer {api_token}')
    await form.getByRole('button', { name: 'Add parameter' }).click()
    await form.getByLabel('Parameter 1 name').fill('order_number')
    // plain fields, no JSON Schema: a description and a pattern
    await form.getByLabel('Parameter 1 description').fill('The order number, as on the receipt')
    await form.getByLabel('Parameter 1 pattern').fill('^[0-9]+$')
    await form.getByRole('button', { name: 'Add parameter' }).click()
    await form.getByLabel('Parameter 2 name').fill('api_token')
    await form.getByLabel('Parameter 2 source').selectOption('secret')
    await form.getByLabel('Secret api_token').fill(SECRET)
    await form.getByLabel('Response fields').fill('$.status')
    await expectScreenHealthy(w, 'actions (new action form)')
    await form.getByRole('button', { name: 'Create action' }).click()

    const name = form.getByLabel('Name', { exact: true })
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true')
    const described = (await name.getAttribute('aria-describedby'))!.split(' ').find((id) => id.endsWith('-err'))!
    expect(await page.locator(`[id="${described}"]`).textContent()).toMatch(/pattern|match|name/i)
    await name.fill('order_status')
    await form.getByRole('button', { name: 'Create action' }).click()
    await page.getByRole('heading', { level: 1, name: 'order_status' }).waitFor()
    const [created] = (await tenant.api.get('/actions')).body.items
    expect(created).toMatchObject({ name: 'order_status', enabled: false, secrets: { api_token: expect.stringMatching(/^•+9876$/) } })
    expect(created.parameters[0].schema).toEqual({ type: 'string', description: 'The order number, as on the receipt', pattern: '^[0-9]+$' })
    // the JSON Schema stays there as the advanced view
    await page.getByLabel('Parameter 1: edit as JSON Schema').check()
    expect(JSON.parse(await page.getByLabel('Parameter 1 schema (JSON)').inputValue())).toEqual(created.parameters[0].schema)
    // the enable switch and the call log come first on an action's page
    const enable = page.getByRole('checkbox', { name: 'Enabled: the bot may call this action' })
    const callsHeading = page.getByRole('heading', { name: 'Call log' })
    const consoleHeading = page.getByRole('heading', { name: 'Test console' })
    const top = async (l: typeof enable) => (await l.boundingBox())!.y
    expect(await top(enable)).toBeLessThan(await top(callsHeading))
    expect(await top(callsHeading)).toBeLessThan(await top(consoleHeading))
    await enable.check()
    await until('enabled from its page', async () => (await tenant.api.get(`/actions/${created.id}`)).body.enabled === true)
    await enable.uncheck()
    await until('disabled again', async () => (await tenant.api.get(`/actions/${created.id}`)).body.enabled === false)
    expect(await page.content()).not.toContain(SECRET)

    // The dry run: the exact request, the secret masked, nothing sent.
    await page.getByLabel('Arguments (JSON)').fill('{"order_number": "12345"}')
    await page.getByRole('button', { name: 'Dry run' }).click()
    const request = page.getByLabel('Request', { exact: true })
    await request.waitFor()
    const shown = (await request.textContent())!
    expect(shown).toContain(`GET ${api.url}/orders/12345`)
    expect(shown).toMatch(/authorization: Bearer •+/i)
    expect(shown).not.toContain(SECRET)
    expect(api.requests).toHaveLength(0)
    await expectScreenHealthy(w, 'action detail (dry run)')
    await screenshot(env, page, 'action-dry-run', { docs: true })

    // "Send for real": the request reaches the workspace's API, the answer and what the model sees are shown, the call is logged.
    api.handler = (_req, res) => json(res, 200, { status: 'shipped', internal: 'not for the model' })
    await page.getByLabel('Send for real').check()
    await page.getByRole('button', { name: 'Send request' }).click()
    await page.getByRole('heading', { name: 'Sent: ok' }).waitFor()
    expect(api.requests).toHaveLength(1)
    expect(api.requests[0]!.url).toBe('/orders/12345')
    expect(api.requests[0]!.headers.authorization).toBe(`Bearer ${SECRET}`)
    expect(await page.getByRole('heading', { name: /^Response: HTTP 200 in \d+ ms$/ }).count()).toBe(1)
    const modelView = (await page.getByLabel('Model view').textContent())!
    expect(modelView).toContain('shipped')
    expect(modelView).not.toContain('not for the model')
    const log = page.getByRole('table', { name: 'Calls of order_status' })
    await log.getByText('ok', { exact: true }).waitFor()
    // response fields picked from that answer: a click adds the field's JSONPath
    const fieldsBox = page.getByLabel('Response fields')
    expect(await fieldsBox.inputValue()).toBe('$.status')
    await page.getByRole('button', { name: '$.internal: not for the model' }).click()
    expect(await fieldsBox.inputValue()).toBe('$.status\n$.internal')
    expect(await page.getByRole('button', { name: '$.status: shipped' }).isDisabled()).toBe(true)
    expect(await page.content()).not.toContain(SECRET)
    await expectScreenHealthy(w, 'action detail (live test)')
    api.requests.length = 0

    // The list's switch enables it.
    await page.getByRole('link', { name: '← All actions' }).click()
    const toggle = page.getByRole('checkbox', { name: /order_status/ })
    expect(await toggle.isChecked()).toBe(false)
    await toggle.check()
    await until('enabled', async () => (await tenant.api.get(`/actions/${created.id}`)).body.enabled === true)
    await expect.poll(() => toggle.isChecked()).toBe(true)
    await expectScreenHealthy(w, 'actions (list)')

    // The workspace's action secret (made at the live call above): only its mask; a rotation asks first and shows the new one once.
    const secretCard = page.getByRole('region', { name: 'Signing secret' })
    const mask = secretCard.locator('dd code')
    await mask.waitFor()
    expect(await mask.textContent()).toMatch(/^•+.{4}$/)
    page.once('dialog', (d) => void d.accept())
    await secretCard.getByRole('button', { name: 'Rotate signing secret' }).click()
    const once = page.getByRole('region', { name: 'Your action signing secret.' })
    const value = (await once.locator('code').textContent())!
    expect(value).toMatch(/^whsec_/)
    await expectScreenHealthy(w, 'actions (secret shown once)')
    await once.getByRole('button', { name: 'I saved it' }).click()
    await expect.poll(() => mask.textContent()).toMatch(new RegExp(`^•+${value.slice(-4)}$`))
    expect(await page.content()).not.toContain(value)
    await page.close()
  })

  it('imports operations from an OpenAPI document as disabled actions', async () => {
    const w = await watchedPage(env)
    const { page } = w
    await openScreen(page, env, '/actions', 'Actions')
    await page.getByRole('button', { name: 'Import from OpenAPI' }).click()
    const spec = {
      openapi: '3.0.3',
      info: { title: 'Shop', version: '1' },
      servers: [{ url: '/v1' }],
      paths: {
        '/stock/{sku}': {
          get: {
            operationId: 'getStock',
            summary: 'Stock of a product',
            parameters: [{ name: 'sku', in: 'path', required: true, schema: { type: 'string' } }],
          },
        },
      },
    }
    const form = page.getByRole('form', { name: 'Import from OpenAPI' })
    await form.getByLabel('OpenAPI document (JSON or YAML)').fill(JSON.stringify(spec))
    await form.getByLabel('Base URL (optional)').fill(api.url)
    await form.getByRole('button', { name: 'Import' }).click()
    await form.getByText('1 actions created, all disabled').waitFor()
    const made = (await tenant.api.get('/actions')).body.items.find((a: { url: string }) => a.url.includes('/stock/'))
    expect(made).toMatchObject({ enabled: false, method: 'GET' })
    await form.getByRole('link', { name: made.name }).waitFor()
    await expectScreenHealthy(w, 'actions (imported)')
    await page.close()
  })

  it('shows an editor the actions read-only, with the dry run but not the live switch', async () => {
    const editor = await addMember(env.t, tenant, 'editor')
    const context = await env.browser.newContext!()
    await context.addCookies([{ name: 'access_token', value: editor.token, url: env.t.url, httpOnly: true, sameSite: 'Lax' }])
    const w = await watchedPage(env, undefined, context)
    const { page } = w
    await openScreen(page, env, '/actions', 'Actions')
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Actions', exact: true }).waitFor()
    await page.getByRole('link', { name: 'order_status' }).waitFor()
    expect(await page.getByRole('button', { name: 'New action' }).count()).toBe(0)
    expect(await page.getByRole('checkbox').count()).toBe(0)
    await page.getByRole('link', { name: 'order_status' }).click()
    await page.getByRole('heading', { level: 1, name: 'order_status' }).waitFor()
    expect(await page.getByLabel('Name', { exact: true }).isDisabled()).toBe(true)
    expect(await page.getByLabel('Send for real').count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Save action' }).count()).toBe(0)
    await page.getByLabel('Arguments (JSON)').fill('{"order_number": "777"}')
    await page.getByRole('button', { name: 'Dry run' }).click()
    await page.getByLabel('Request', { exact: true }).getByText(`${api.url}/orders/777`).waitFor()
    await expectScreenHealthy(w, 'action detail (editor)')
    await context.close()
  })

  it('shows the widget card for a write action; a double click on Confirm calls the API once', async () => {
    for (const a of (await tenant.api.get('/actions')).body.items) await tenant.api.patch(`/actions/${a.id}`, { enabled: false })
    const write = await tenant.api.post('/actions', {
      name: 'cancel_order',
      description: 'Cancel an order by its order number.',
      method: 'POST',
      url: `${api.url}/users/{user_id}/orders/{order_number}/cancel`,
      body_template: '{"order": "{order_number}"}',
      kind: 'write',
      parameters: [
        { name: 'order_number', source: 'model', schema: { type: 'string', pattern: '^[0-9]{3,10}$' }, required: true },
        { name: 'user_id', source: 'visitor', claim: 'user_id' },
      ],
      enabled: true,
    })
    expect(write.status, write.text).toBe(201)
    api.handler = (_req, res) => json(res, 200, { cancelled: true })
    api.requests.length = 0
    const bot = (await tenant.api.post('/bots', { name: 'Shop', allowed_domains: ['127.0.0.1'] })).body
    const kyc = (await tenant.api.post('/tenants/me/kyc/secret')).body.secret_key
    const token = signIdentityToken({ exp: Math.floor(env.t.clock.now().getTime() / 1000) + 600, user_id: 'u-42' } as never, kyc)
    site = await serveHostPage(() => hostPageHtml({ embedSrc: `${env.t.url}/embed.js`, botId: bot.public_id }))

    const page = await env.browser.context.newPage()
    await page.goto(site.url)
    const W = '[data-support-chat]'
    await page.locator(`${W} >> .launcher`).click()
    await page.evaluate((tk) => (window as unknown as { SupportChat: { identify(t: string): void } }).SupportChat.identify(tk), token)
    await page.locator(`${W} >> form textarea`).fill('Please cancel my order 55555')
    await page.locator(`${W} >> form textarea`).press('Enter')

    const card = page.locator(`${W} >> .confirm`)
    await card.waitFor({ timeout: 30_000 })
    expect(await card.locator('dt').allTextContents()).toEqual(['order_number'])
    expect(await card.locator('dd').allTextContents()).toEqual(['55555'])
    await expect.poll(() => card.evaluate((el) => (el.getRootNode() as ShadowRoot).activeElement === el)).toBe(true)
    expect(api.requests).toHaveLength(0)

    // Keyboard reachable: from the focused card, Tab reaches Cancel, then Confirm.
    const focused = () => page.evaluate(() => document.querySelector('[data-support-chat]')!.shadowRoot!.activeElement?.textContent)
    await page.keyboard.press('Tab')
    expect(await focused()).toBe('Cancel')
    await page.keyboard.press('Tab')
    expect(await focused()).toBe('Confirm')
    const bubbles = page.locator(`${W} >> .msg.assistant .bubble`)
    const before = await bubbles.count()
    await card.getByRole('button', { name: 'Confirm' }).dblclick()
    await until('the call', async () => api.requests.length >= 1)
    await page.waitForTimeout(500)
    expect(api.requests).toHaveLength(1)
    expect(api.requests[0]!.url).toBe('/users/u-42/orders/55555/cancel')
    expect(api.requests[0]!.headers['idempotency-key']).toBeTruthy()
    expect(await card.getByRole('button', { name: 'Confirm' }).isDisabled()).toBe(true)
    expect(await card.getByRole('button', { name: 'Cancel' }).isDisabled()).toBe(true)
    // The outcome is said as a bot message, once.
    await expect.poll(() => bubbles.count()).toBe(before + 1)
    expect((await bubbles.last().textContent())!.trim()).not.toBe('')

    // Cancel on a second card posts approve:false: nothing reaches the API.
    await page.locator(`${W} >> form textarea`).fill('Please cancel my order 66666')
    await page.locator(`${W} >> form textarea`).press('Enter')
    const second = page.locator(`${W} >> .confirm`).nth(1)
    await second.waitFor({ timeout: 30_000 })
    await second.getByRole('button', { name: 'Cancel' }).click()
    await expect.poll(() => second.getByRole('button', { name: 'Confirm' }).isDisabled()).toBe(true)
    await until('the cancel', async () =>
      (await tenant.api.get(`/actions/${write.body.id}/calls`)).body.items.some((c: { status: string }) => c.status === 'cancelled'),
    )
    expect(api.requests).toHaveLength(1)
    await page.close()

    // The owner's transcript of that conversation shows each call under its turn: name, status, latency, redacted arguments.
    const sessionId = (await tenant.api.get(`/actions/${write.body.id}/calls`)).body.items[0].session_id
    const w = await watchedPage(env)
    await openScreen(w.page, env, `/conversations/${sessionId}`, 'Conversation')
    const calls = w.page.locator('.action-calls li')
    await expect.poll(() => calls.count()).toBe(2)
    const texts = await calls.allTextContents()
    expect(texts[0]).toMatch(/^cancel_order\s*ok HTTP 200 · \d+ ms · \{/)
    expect(texts[0]).toContain('"order_number":"55555"')
    expect(texts[0]).toContain('"user_id":"[visitor:user_id]"')
    expect(texts[1]).toMatch(/cancel_order\s*cancelled/)
    expect(await w.page.content()).not.toContain('u-42')
    await expectScreenHealthy(w, 'transcript (action calls)')

    // handed off: the ticket page lists the calls of its conversation too
    const esc = await env.t.api().post(`/widget/escalate?bot_id=${bot.public_id}&session_id=${sessionId}`, { user_note: 'Please check my order' })
    expect(esc.status, esc.text).toBe(200)
    const ticket = (await tenant.api.get('/escalations')).body.tickets.find((x: { session_id: string }) => x.session_id === sessionId)
    await openScreen(w.page, env, `/tickets/${ticket.id}`, `Ticket ${ticket.ticket_number}`)
    const onTicket = w.page.getByRole('region', { name: 'Actions the bot called' }).locator('li')
    await expect.poll(() => onTicket.count()).toBe(2)
    expect(await onTicket.first().textContent()).toMatch(/^cancel_order\s*ok HTTP 200/)
    await expectScreenHealthy(w, 'ticket (action calls)')
    await w.page.close()
  })
})
