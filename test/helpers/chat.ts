import { expect } from 'vitest'
import { signIdentityToken } from '../../src/modules/tenants/identity-token.fns.js'
import type { ChatCall, FakeLlm } from '../fakes/fake-llm.js'
import type { TestApp } from './app.js'
import { uploadReady } from './documents.js'
import type { Tenant } from './factories.js'
import type { Api } from './http.js'
import { until } from './wait.js'

/** Which pipeline call a recorded model request was. */
export const system = (c: { messages: { role: string; content: string }[] }) =>
  c.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n')
export const userText = (c: { messages: { role: string; content: string }[] }) =>
  c.messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join('\n')
export const isGuard = (c: ChatCall) => c.json && system(c).includes('routing classifier')
export const isRewrite = (c: ChatCall) => c.json && system(c).includes('Rewrite the visitor')
export const isValidation = (c: ChatCall) => c.json && system(c).includes('You verify')
export const isAnswer = (c: ChatCall) => !c.json && system(c).includes('=== Sources ===')

export const REFUNDS_MD = `# Refunds

Refunds are processed within 5 business days after we receive the returned item.

## Digital products

Digital products can be refunded within 14 days of purchase if they were not downloaded.
`

export const SHIPPING_MD = `# Shipping

Standard shipping to Germany takes 3 to 4 working days and costs 4.90 euros.
Express shipping arrives the next working day for 12 euros.
`

/** A knowledge base for one tenant: uploads through the API and waits for indexing. */
export async function withDocs(t: TestApp, tenant: Tenant, docs: Record<string, string>) {
  const out: Record<string, string> = {}
  for (const [name, md] of Object.entries(docs)) out[name] = (await uploadReady(t, tenant.api, name, md)).id
  return out
}

/**
 * withDocs, then each document's vectors ready too: a ready document is searchable by its words at once and gets its
 * vectors after, so a test whose turn needs the vectors (a page found only by them, their hits as evidence) waits for
 * them; under a loaded CI they came after the turn.
 */
export async function withDocsAndVectors(t: TestApp, tenant: Tenant, docs: Record<string, string>) {
  const ids = await withDocs(t, tenant, docs)
  for (const [name, id] of Object.entries(ids))
    await until(`the vectors of ${name}`, async () => (await tenant.api.get(`/documents/${id}`)).body.embeddings?.status === 'ready')
  return ids
}

export const chatApi = (t: TestApp, tenant: Tenant): Api => t.api().withApiKey(tenant.apiKey)

/** Frames of a text/event-stream body. */
export function sseFrames(text: string): any[] {
  return text
    .split('\n\n')
    .map((f) => f.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => !!l)
    .map((l) => JSON.parse(l.slice(6)))
}

/** Calls made by the fake since `from` (a count taken before the request). */
export const callsSince = (fake: FakeLlm, from: number) => fake.chatCalls().slice(from)

/** A widget session opened with an identity token (signed with the workspace's KYC secret) carrying `claims`: its id. */
export async function identifiedSession(t: TestApp, owner: Tenant, claims: Record<string, unknown>) {
  const secret = await owner.api.post('/tenants/me/kyc/secret')
  expect(secret.status, secret.text).toBe(200)
  const token = signIdentityToken({ exp: Math.floor(t.clock.now().getTime() / 1000) + 600, ...claims } as never, secret.body.secret_key)
  const init = await t.api().post('/widget/session/init', { bot_id: owner.bot.public_id, identity_token: token })
  expect(init.body.mode).toBe('identified')
  return init.body.session_id as string
}
