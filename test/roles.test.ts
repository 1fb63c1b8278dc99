import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeLlm, type FakeLlm } from './fakes/fake-llm.js'
import { startApp, type TestApp } from './helpers/app.js'
import { chatApi } from './helpers/chat.js'
import { createTenant, uniqueEmail, type Tenant } from './helpers/factories.js'
import type { Api } from './helpers/http.js'
import { addMember, ROLES, type Member, type Role } from './helpers/team.js'

/**
 * The role/route matrix: every route of the service's own OpenAPI document that takes a dashboard session
 * is called as each role, and must answer 403 exactly for the roles the rule leaves out (anything but 401,
 * 403 and 422 for the others, so a request the validator refuses cannot pass for "allowed"). A route
 * without a rule fails the suite: a new route has to decide who may call it.
 */
const ALL: readonly Role[] = ROLES
const OWNER: readonly Role[] = ['owner']
const MANAGE: readonly Role[] = ['owner', 'admin']
const KNOWLEDGE: readonly Role[] = ['owner', 'admin', 'editor']
const TICKETS: readonly Role[] = ['owner', 'admin', 'agent']
const ANALYTICS: readonly Role[] = ['owner', 'admin', 'analyst']
const EVALS_READ: readonly Role[] = ['owner', 'admin', 'editor', 'analyst']

const RULES: Record<string, readonly Role[]> = {
  // oneself and the workspace's name, bots (read), members (the inbox names assignees), model status
  getMe: ALL,
  updateMe: ALL,
  getWidgetToken: ALL,
  llmStatus: ALL,
  getTenantMe: ALL,
  listMembers: ALL,
  listBots: ALL,
  getBot: ALL,
  getBotDisclosure: ALL,
  // bots, privacy and support settings
  createBot: MANAGE,
  updateBot: MANAGE,
  deleteBot: MANAGE,
  updateBotDisclosure: MANAGE,
  updateTenantMe: MANAGE,
  getKycStatus: MANAGE,
  getPrivacyConfig: MANAGE,
  updatePrivacyConfig: MANAGE,
  getSupportSettings: MANAGE,
  updateSupportSettings: MANAGE,
  // office hours: owners and admins set them, everyone reads them; one's own live status
  getOfficeHours: ALL,
  updateOfficeHours: MANAGE,
  updateMyStatus: ALL,
  applyPiiEventRetention: MANAGE,
  // members, invitations, the audit trails
  updateMember: MANAGE,
  removeMember: MANAGE,
  createInvitation: MANAGE,
  listInvitations: MANAGE,
  revokeInvitation: MANAGE,
  resendInvitation: MANAGE,
  listAuditLog: MANAGE,
  listPiiEvents: MANAGE,
  // keys, signing secret, ownership
  createKycSecret: OWNER,
  rotateKycSecret: OWNER,
  listApiKeys: OWNER,
  rotateApiKey: OWNER,
  revokeApiKey: OWNER,
  transferOwnership: OWNER,
  // outbound webhooks and Slack
  listWebhookEndpoints: MANAGE,
  createWebhookEndpoint: MANAGE,
  updateWebhookEndpoint: MANAGE,
  deleteWebhookEndpoint: MANAGE,
  rotateWebhookSecret: MANAGE,
  testWebhookEndpoint: MANAGE,
  listWebhookDeliveries: MANAGE,
  resendFailedWebhookDeliveries: MANAGE,
  listWebhookAttempts: MANAGE,
  resendWebhookDelivery: MANAGE,
  // actions: owners and admins manage them, editors read and dry-run them
  listActions: KNOWLEDGE,
  getAction: KNOWLEDGE,
  testAction: KNOWLEDGE,
  listActionCalls: KNOWLEDGE,
  createAction: MANAGE,
  updateAction: MANAGE,
  deleteAction: MANAGE,
  importOpenApiActions: MANAGE,
  getActionSigningSecret: MANAGE,
  rotateActionSigningSecret: MANAGE,
  // evaluations: owners, admins and editors write and run them; analysts read them
  listEvalCases: EVALS_READ,
  createEvalCase: KNOWLEDGE,
  updateEvalCase: KNOWLEDGE,
  deleteEvalCase: KNOWLEDGE,
  importEvalCases: KNOWLEDGE,
  createEvalCaseFromSession: KNOWLEDGE,
  startEvalRun: KNOWLEDGE,
  listEvalRuns: EVALS_READ,
  getEvalRun: EVALS_READ,
  diffEvalRuns: EVALS_READ,
  getEvalSettings: EVALS_READ,
  updateEvalSettings: KNOWLEDGE,
  // analytics and exports
  getAnalyticsSummary: ANALYTICS,
  getAnalyticsAgents: ANALYTICS,
  getAnalyticsTimeseries: ANALYTICS,
  getUnansweredTopics: ANALYTICS,
  createExport: ANALYTICS,
  listExports: ANALYTICS,
  getExport: ANALYTICS,
  downloadExport: ANALYTICS,
  // knowledge
  listDocuments: KNOWLEDGE,
  uploadDocument: KNOWLEDGE,
  getDocument: KNOWLEDGE,
  deleteDocument: KNOWLEDGE,
  getDocumentHealth: KNOWLEDGE,
  runDocumentHealth: KNOWLEDGE,
  listKnowledgeSources: KNOWLEDGE,
  createUrlSource: KNOWLEDGE,
  createConnectorSource: KNOWLEDGE,
  testConnectorSource: KNOWLEDGE,
  getUrlSource: KNOWLEDGE,
  updateUrlSource: KNOWLEDGE,
  deleteUrlSource: KNOWLEDGE,
  refreshUrlSource: KNOWLEDGE,
  deleteUrlSourcePage: KNOWLEDGE,
  listGaps: KNOWLEDGE,
  getGapSummary: KNOWLEDGE,
  recalculateGaps: KNOWLEDGE,
  dismissGap: KNOWLEDGE,
  reactivateGap: KNOWLEDGE,
  draftGapArticle: KNOWLEDGE,
  ...Object.fromEntries(
    [
      'getKnowledgeProfile',
      'updateKnowledgeProfile',
      'listKnowledgeFaq',
      'approveAllKnowledgeFaq',
      'updateKnowledgeFaq',
      'deleteKnowledgeFaq',
      'approveKnowledgeFaq',
      'rejectKnowledgeFaq',
    ].flatMap((id) => [
      [id, KNOWLEDGE],
      [`${id}ForTenant`, KNOWLEDGE],
    ]),
  ),
  // tickets and conversations
  listEscalations: TICKETS,
  getEscalation: TICKETS,
  assignEscalation: TICKETS,
  resolveEscalation: TICKETS,
  deleteEscalationOriginal: TICKETS,
  // live conversation
  escalationEvents: TICKETS,
  postEscalationMessage: TICKETS,
  returnEscalationToBot: TICKETS,
  closeEscalationConversation: TICKETS,
  escalationTyping: TICKETS,
  listChatSessions: TICKETS,
  getChatSessionLog: TICKETS,
  deleteChatSessionOriginals: TICKETS,
  chatMessageFeedback: TICKETS,
  listBadAnswers: TICKETS,
  getChatHistory: TICKETS,
  // operator assist (#39): who may post messages may ask for suggestions and summaries
  suggestEscalationReply: TICKETS,
  getEscalationDraft: TICKETS,
  summarizeEscalation: TICKETS,
  getTicketEmail: TICKETS,
  getAttachment: TICKETS,
  uploadEscalationAttachment: TICKETS,
  // saved replies: owners, admins and editors manage them, agents use them
  listSavedReplies: ['owner', 'admin', 'editor', 'agent'],
  createSavedReply: KNOWLEDGE,
  updateSavedReply: KNOWLEDGE,
  deleteSavedReply: KNOWLEDGE,
  // the workspace's languages (#40) and a bot's e-mail channel (#38, its webhook URL is a credential): settings
  getLanguageSettings: MANAGE,
  updateLanguageSettings: MANAGE,
  getBotEmail: MANAGE,
  updateBotEmail: MANAGE,
  resendBotEmailSenderConfirmation: MANAGE,
  rotateBotEmailToken: MANAGE,
  listBotEmailMessages: MANAGE,
  // the bot page's test mail (#52): a model turn and a mail, from the settings screen
  sendBotTestMail: MANAGE,
}

/** Bodies the generic sample cannot guess (a valid request the guard, not the validator, decides). */
const BODIES: Record<string, () => unknown> = {
  updateTenantMe: () => ({ name: 'Renamed workspace' }),
  createInvitation: () => ({ email: uniqueEmail('matrix'), role: 'analyst' }),
  updateMember: () => ({ role: 'analyst' }),
  createUrlSource: () => ({ url: 'https://docs.example.test/' }),
  // an account on loopback where nothing listens: the guard decides, the sync (or the test connection) fails later
  createConnectorSource: () => ({ kind: 'intercom', schedule: 'manual', config: { base_url: 'http://127.0.0.1:9', access_token: 'matrix-token' } }),
  testConnectorSource: () => ({ kind: 'intercom', config: { base_url: 'http://127.0.0.1:9', access_token: 'matrix-token' } }),
  assignEscalation: () => ({ assignee_user_id: null }),
  updateLanguageSettings: () => ({ knowledge: 'en', answer: [], fallback: 'en' }),
  // a receiver on loopback (the app allows private networks here, as the crawler's setting says); nothing listens
  createWebhookEndpoint: () => ({ url: 'http://127.0.0.1:9/hook', events: ['ticket.created'] }),
  updateWebhookEndpoint: () => ({ description: 'Matrix' }),
  createAction: () => ({ name: `matrix_${randomUUID().slice(0, 8)}`, description: 'Matrix', method: 'GET', url: 'http://127.0.0.1:9/x' }),
  updateAction: () => ({ description: 'Matrix' }),
  importOpenApiActions: () => ({
    spec: JSON.stringify({ openapi: '3.0.3', info: { title: 'm', version: '1' }, paths: { [`/m${randomUUID().slice(0, 8)}`]: { get: {} } } }),
    base_url: 'http://127.0.0.1:9',
  }),
  updateEvalCase: () => ({ tags: ['matrix'] }),
  updateEvalSettings: () => ({ evals_auto_run: false }),
  importEvalCases: () => {
    const form = new FormData()
    form.append('file', new Blob(['question,expected_outcome\nMatrix?,answered\n']), 'cases.csv')
    return form
  },
  uploadEscalationAttachment: () => {
    const form = new FormData()
    form.append('file', new Blob(['A log the operator attaches.'], { type: 'text/plain' }), 'log.txt')
    return form
  },
  uploadDocument: () => {
    const form = new FormData()
    form.append('file', new Blob(['# Matrix\n\nA page of the role matrix.'], { type: 'text/markdown' }), 'matrix.md')
    return form
  },
}

type Schema = {
  type?: string | string[]
  format?: string
  enum?: unknown[]
  const?: unknown
  default?: unknown
  minLength?: number
  minimum?: number
  minItems?: number
  pattern?: string
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  $ref?: string
}

/** A minimal value that satisfies the schema (required fields only). */
function sample(s: Schema | undefined, doc: { components?: { schemas?: Record<string, Schema> } }): unknown {
  if (!s) return undefined
  if (s.$ref) return sample(doc.components?.schemas?.[s.$ref.split('/').pop()!], doc)
  if (s.const !== undefined) return s.const
  if (s.enum) return s.enum[0]
  if (s.default !== undefined) return s.default
  const alt = s.anyOf ?? s.oneOf
  if (alt) return sample(alt.find((x) => x.type !== 'null') ?? alt[0], doc)
  if (s.allOf) return Object.assign({}, ...s.allOf.map((x) => sample(x, doc) as object))
  const type = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type
  switch (type) {
    case 'object':
      return Object.fromEntries((s.required ?? []).map((k) => [k, sample(s.properties?.[k], doc)]))
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items, doc))
    case 'integer':
    case 'number':
      return Math.max(s.minimum ?? 1, 1)
    case 'boolean':
      return false
    case 'null':
      return null
    default:
      if (s.format === 'uuid') return randomUUID()
      if (s.format === 'email') return uniqueEmail('sample')
      if (s.format === 'date-time') return new Date().toISOString()
      if (s.format === 'uri') return 'https://example.test/'
      if (s.format === 'date' || s.pattern === '^\\d{4}-\\d{2}-\\d{2}$') return new Date().toISOString().slice(0, 10)
      return 'x'.repeat(Math.max(s.minLength ?? 1, 1))
  }
}

interface Operation {
  operationId: string
  method: string
  path: string
  params: { name: string; in: string; required?: boolean; schema: Schema }[]
  body: Schema | undefined
}

let t: TestApp
let fake: FakeLlm
let owner: Tenant
let doc: { paths: Record<string, Record<string, any>>; components?: { schemas?: Record<string, Schema> } }
const members = {} as Record<Role, Api>

beforeAll(async () => {
  fake = await startFakeLlm()
  t = await startApp({ env: { LLM_BASE_URL: fake.url, CRAWLER_ALLOW_PRIVATE_NETWORKS: 'true' } })
  owner = await createTenant(t)
  members.owner = owner.api
  for (const role of ['admin', 'editor', 'agent', 'analyst'] as const) members[role] = (await addMember(t, owner, role)).api
  doc = (await t.api().get('/openapi.json')).body
}, 120_000)
afterAll(async () => {
  await t?.close()
  await fake?.close()
})

function protectedOperations(): Operation[] {
  const out: Operation[] = []
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const security = JSON.stringify(op.security ?? [])
      if (!security.includes('bearerAuth')) continue
      const content = op.requestBody?.content?.['application/json']
      out.push({ operationId: op.operationId, method: method.toUpperCase(), path, params: op.parameters ?? [], body: content?.schema })
    }
  }
  return out
}

function requestOf(op: Operation): { url: string; body: unknown } {
  let url = op.path
  const query = new URLSearchParams()
  for (const p of op.params) {
    const value = p.name === 'tenant_id' ? owner.tenantId : sample(p.schema, doc)
    if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(value)))
    else if (p.in === 'query' && p.required) query.set(p.name, String(value))
  }
  const qs = query.toString()
  const body = BODIES[op.operationId]?.() ?? (op.body ? sample(op.body, doc) : undefined)
  return { url: qs ? `${url}?${qs}` : url, body }
}

/** Event streams never end: their status and first bytes, then the connection is cut. */
const STREAMS = new Set(['escalationEvents'])
async function streamStatus(api: Api, url: string) {
  const controller = new AbortController()
  const res = await fetch(api.base + url, { headers: { authorization: `Bearer ${api.token}`, 'x-forwarded-for': api.ip }, signal: controller.signal })
  const text = res.status === 200 ? '' : await res.text()
  controller.abort()
  return { status: res.status, text, body: text ? JSON.parse(text) : null }
}

describe('role/route matrix', () => {
  it('has a rule for every protected route of the OpenAPI document, and no rule for a route that is gone', () => {
    const ops = protectedOperations()
    expect(ops.length).toBeGreaterThan(60)
    const missing = ops.map((o) => o.operationId).filter((id) => !(id in RULES))
    expect(missing, 'routes without a role rule: add them to RULES in test/roles.test.ts').toEqual([])
    const ids = new Set(ops.map((o) => o.operationId))
    expect(
      Object.keys(RULES).filter((id) => !ids.has(id)),
      'rules of routes that no longer exist',
    ).toEqual([])
  })

  it('answers 403 exactly to the roles a route leaves out', async () => {
    const wrong: string[] = []
    for (const op of protectedOperations()) {
      const allowed = RULES[op.operationId]
      if (!allowed) continue
      for (const role of ROLES) {
        const { url, body } = requestOf(op)
        const res = STREAMS.has(op.operationId) ? await streamStatus(members[role], url) : await members[role].request(op.method, url, body)
        const ok = allowed.includes(role) ? ![401, 403, 422].includes(res.status) : res.status === 403
        if (!ok) wrong.push(`${op.operationId} (${op.method} ${url}) as ${role}: ${res.status} ${res.text.slice(0, 160)}`)
        else if (res.status === 403 && !allowed.includes(role)) {
          expect(res.body.detail).toMatch(new RegExp(`^Your role \\(${role}\\) may not `))
        }
      }
    }
    expect(wrong).toEqual([])
  }, 180_000)

  it("the model key is the owner's: an admin may rename the workspace but not set the key", async () => {
    const rename = await members.admin.patch('/tenants/me', { name: 'By the admin' })
    expect(rename.status, rename.text).toBe(200)
    const key = await members.admin.patch('/tenants/me', { llm_api_key: 'sk-admin-0123456789' })
    expect(key.status).toBe(403)
    expect(key.body.detail).toBe('Your role (admin) may not manage the workspace keys and ownership')
    expect((await members.owner.patch('/tenants/me', { llm_api_key: 'sk-owner-0123456789' })).status).toBe(200)
  })

  it("the signing secret is the owner's to create and rotate; owners and admins read its status (set or not, masked hint), never the secret", async () => {
    const ws = await createTenant(t)
    const [admin, editor] = [await addMember(t, ws, 'admin'), await addMember(t, ws, 'editor')]
    expect((await admin.api.get('/tenants/me/kyc/status')).body).toMatchObject({ has_secret: false, masked_secret_hint: null })
    const refused = await admin.api.post('/tenants/me/kyc/secret')
    expect(refused.status).toBe(403)
    expect(refused.body.detail).toBe('Your role (admin) may not manage the workspace keys and ownership')
    const created = await ws.api.post('/tenants/me/kyc/secret')
    expect(created.status, created.text).toBe(200)
    const secret = created.body.secret_key as string
    expect((await admin.api.post('/tenants/me/kyc/rotate')).status).toBe(403)
    for (const api of [ws.api, admin.api]) {
      const status = await api.get('/tenants/me/kyc/status')
      expect(status.status).toBe(200)
      expect(status.body.has_secret).toBe(true)
      expect(status.body.masked_secret_hint).toMatch(/^•{8}.{1,8}$/)
      expect(secret.endsWith(status.body.masked_secret_hint.replace(/^•+/, ''))).toBe(true)
      expect(status.text).not.toContain(secret)
    }
    expect((await editor.api.get('/tenants/me/kyc/status')).status).toBe(403)
  })

  it("the docs' role table (docs/team.md) says who may do what with the signing secret, as the rules above do", () => {
    const readme = readFileSync(join(import.meta.dirname, '..', 'docs', 'team.md'), 'utf8')
    const rowOf = (words: string) => {
      const row = readme.split('\n').find((l) => l.startsWith('|') && l.includes(words))
      expect(row, `docs/team.md role table row with "${words}"`).toBeDefined()
      const cells = row!
        .split('|')
        .slice(2, 2 + ROLES.length)
        .map((c) => c.trim())
      return ROLES.filter((_, i) => cells[i] === 'Y')
    }
    expect(rowOf('create or rotate the signing secret')).toEqual([...RULES.createKycSecret!])
    expect(rowOf('create or rotate the signing secret')).toEqual([...RULES.rotateKycSecret!])
    expect(rowOf("read the signing secret's status")).toEqual([...RULES.getKycStatus!])
  })

  it('/auth/me tells each member its role and permissions, for the menus', async () => {
    for (const role of ROLES) {
      const me = await members[role].get('/auth/me')
      expect(me.status).toBe(200)
      expect(me.body.role).toBe(role)
      expect(me.body.bot_ids).toBeNull()
    }
    expect((await members.agent.get('/auth/me')).body.permissions).toEqual(['tickets', 'saved_replies_read', 'member'])
    expect((await members.analyst.get('/auth/me')).body.permissions).toEqual(['evals_read', 'analytics', 'member'])
  })
})

describe('bot scope', () => {
  let scoped: Member
  let botA: { id: string; public_id: string }
  let botB: { id: string; public_id: string }
  let ticketA: string
  let ticketB: string
  let sessionA: string
  let sessionB: string

  beforeAll(async () => {
    botA = owner.bot
    const created = await owner.api.post('/bots', { name: 'Second bot' })
    expect(created.status, created.text).toBe(201)
    botB = created.body
    const open = async (bot: { public_id: string }) => {
      const chat = await chatApi(t, owner).post('/chat', { question: 'Where is my parcel?', bot_public_id: bot.public_id })
      expect(chat.status, chat.text).toBe(200)
      const esc = await chatApi(t, owner).post(`/chat/${chat.body.session_id}/escalate`, { trigger: 'user_request' })
      expect(esc.status, esc.text).toBe(200)
      const list = await owner.api.get('/escalations')
      const ticket = list.body.tickets.find((x: { ticket_number: string }) => x.ticket_number === esc.body.ticket_number)
      return { session: chat.body.session_id as string, ticket: ticket.id as string }
    }
    ;({ session: sessionA, ticket: ticketA } = await open(botA))
    ;({ session: sessionB, ticket: ticketB } = await open(botB))
    scoped = await addMember(t, owner, 'agent', { botIds: [botA.id] })
  }, 120_000)

  it("a member limited to one bot gets 404 for the other bot's bot, tickets and conversations", async () => {
    const api = scoped.api
    for (const path of [
      `/bots/${botB.id}`,
      `/bots/${botB.id}/disclosure`,
      `/escalations/${ticketB}`,
      `/chat/logs/session/${sessionB}`,
      `/chat/history/${sessionB}`,
      `/auth/me/widget-token?bot_id=${botB.public_id}`,
    ]) {
      const res = await api.get(path)
      expect(res.status, `${path}: ${res.text}`).toBe(404)
    }
    expect((await api.post(`/escalations/${ticketB}/resolve`, { resolution_text: 'Done' })).status).toBe(404)
    expect((await api.patch(`/escalations/${ticketB}`, { assignee_user_id: scoped.userId })).status).toBe(404)
    // its own bot's are there
    expect((await api.get(`/bots/${botA.id}`)).status).toBe(200)
    expect((await api.get(`/escalations/${ticketA}`)).status).toBe(200)
    expect((await api.get(`/chat/logs/session/${sessionA}`)).status).toBe(200)
  })

  it('lists leave the other bots out', async () => {
    const api = scoped.api
    expect((await api.get('/bots')).body.items.map((b: { id: string }) => b.id)).toEqual([botA.id])
    const tickets = await api.get('/escalations')
    expect(tickets.body.tickets.map((x: { id: string }) => x.id)).toEqual([ticketA])
    expect(tickets.body.total).toBe(1)
    const sessions = await api.get('/chat/sessions')
    expect(sessions.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([sessionA])
    expect(sessions.body.total).toBe(1)
    // the owner sees both
    expect((await owner.api.get('/escalations')).body.total).toBe(2)
    expect((await scoped.api.get('/auth/me')).body.bot_ids).toEqual([botA.id])
  })

  it('an agent without the grant may not show originals (403); the owner may', async () => {
    const res = await scoped.api.get(`/escalations/${ticketA}?include_original=true`)
    expect(res.status).toBe(403)
    expect(res.body.detail).toMatch(/^Your role \(agent\) may not show original text/)
    expect((await owner.api.get(`/escalations/${ticketA}?include_original=true`)).status).toBe(200)
  })
})
