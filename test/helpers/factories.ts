import { randomBytes } from 'node:crypto'
import { tokenFromMail } from '../fakes/smtp.js'
import type { TestApp } from './app.js'
import type { Api } from './http.js'

export const PASSWORD = 'Corr3ct-Horse!'

export const uniqueEmail = (tag = 'user') => `${tag}-${randomBytes(5).toString('hex')}@example.test`

export interface Tenant {
  api: Api
  email: string
  password: string
  token: string
  apiKey: string
  userId: string
  tenantId: string
  bot: { id: string; public_id: string }
}

/** Registers through the API, reads the verification mail from the SMTP server and verifies. */
export async function createTenant(t: TestApp, opts: { llmKey?: string | null } = {}): Promise<Tenant> {
  const api = t.api()
  const email = uniqueEmail()
  const reg = await api.post('/auth/register', { email, password: PASSWORD })
  if (reg.status !== 200) throw new Error(`register failed: ${reg.status} ${reg.text}`)
  const mail = await t.smtp.waitFor((m) => m.to.includes(email) && /verify/i.test(m.subject))
  const verified = await api.post('/auth/verify-email', { token: tokenFromMail(mail) })
  if (verified.status !== 200) throw new Error(`verify failed: ${verified.status} ${verified.text}`)
  api.withToken(verified.body.token)
  if (opts.llmKey !== null) {
    const r = await api.patch('/tenants/me', { llm_api_key: opts.llmKey ?? 'sk-test-0123456789' })
    if (r.status !== 200) throw new Error(`set llm key failed: ${r.status} ${r.text}`)
  }
  const bots = await api.get('/bots')
  return {
    api,
    email,
    password: PASSWORD,
    token: verified.body.token,
    apiKey: verified.body.api_key,
    userId: verified.body.user.id,
    tenantId: verified.body.user.tenant_id,
    bot: bots.body.items[0],
  }
}
