import type { Db } from '../../db/client.js'
import type { ActionKind, ActionMethod, ActionParameter } from '../../db/schema/actions.js'
import type { Clock } from '../../lib/clock.js'
import { decryptOrNull, lastChars, type Cipher } from '../../lib/crypto.js'
import { conflict, notFound, ValidationError } from '../../lib/errors.js'
import { literalAddressProblem } from '../documents/sources/crawler/ssrf.js'
import type { AuditPort } from '../shared/audit.port.js'
import type { BotScope } from '../shared/bot-scope.js'
import { maskHint, SHORT_SECRET_CHARS } from './actions.fns.js'
import type { ActionData, ActionRow, ActionsRepo } from './actions.repo.js'
import { MAX_ACTIONS } from './actions.schemas.js'
import { importOperations } from './openapi-import.fns.js'
import { newActionSecret, type Runner } from './actions.runner.js'
import { badSchemaPattern, buildRequest, schemaProblem } from './request.fns.js'
import { isAbsolute, probeUrl, unknownPlaceholders, urlTemplateProblem } from './templates.fns.js'

export interface Actor {
  userId: string | null
  ip: string | null
}

export interface ParameterInput {
  name: string
  source: ActionParameter['source']
  schema?: Record<string, unknown>
  claim?: string | null
  value?: string | number | boolean | null
  required?: boolean
}

export interface ActionInput {
  name?: string
  description?: string
  method?: string
  url?: string
  headers?: Record<string, string>
  body_template?: string | null
  parameters?: ParameterInput[]
  kind?: string
  bot_ids?: string[] | null
  enabled?: boolean
  response_fields?: string[]
  timeout_ms?: number
  secrets?: Record<string, string>
}

export const DEFAULT_TIMEOUT_MS = 10_000

/** How an action leaves the service: secrets as masks, never values; no internal column. */
export function presentAction(a: ActionRow) {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    method: a.method,
    url: a.url,
    headers: a.headers,
    body_template: a.body_template,
    parameters: a.parameters,
    kind: a.kind,
    bot_ids: a.bot_ids,
    enabled: a.enabled,
    response_fields: a.response_fields,
    timeout_ms: a.timeout_ms,
    secrets: Object.fromEntries(Object.entries(a.secret_hints).map(([k, v]) => [k, maskHint(v)])),
    created_at: a.created_at.toISOString(),
  }
}

/** An action a member limited to some bots may see: one for every bot, or one naming a bot of theirs. */
export const visibleTo = (scope: BotScope, a: Pick<ActionRow, 'bot_ids'>) => scope === null || a.bot_ids === null || a.bot_ids.some((b) => scope.includes(b))

const invalid = (loc: (string | number)[], msg: string) => new ValidationError(['body', ...loc], msg, 'value_error')

function normalizeParameters(list: ParameterInput[]): ActionParameter[] {
  const seen = new Set<string>()
  return list.map((p, i) => {
    if (seen.has(p.name)) throw invalid(['parameters', i, 'name'], `Parameter ${p.name} is named twice`)
    seen.add(p.name)
    const schema = p.schema ?? { type: 'string' }
    const problem = schemaProblem(schema)
    const pattern = problem ? badSchemaPattern(schema) : null
    if (problem) throw invalid(['parameters', i, 'schema', ...(pattern?.path ?? [])], `The schema of ${p.name} ${problem}`)
    if (p.source === 'visitor' && !p.claim)
      throw invalid(['parameters', i, 'claim'], `${p.name} takes a claim of the visitor's identity: name it (e.g. user_id)`)
    if (p.source === 'constant' && (p.value === null || p.value === undefined))
      throw invalid(['parameters', i, 'value'], `${p.name} is a constant: give its value`)
    return {
      name: p.name,
      source: p.source,
      schema,
      claim: p.source === 'visitor' ? (p.claim ?? null) : null,
      value: p.source === 'constant' ? (p.value ?? null) : null,
      required: p.required ?? p.source !== 'model',
    }
  })
}

/**
 * Actions of the dashboard: definitions (validated: names, JSON Schemas, templates naming only parameters,
 * secrets stored encrypted and shown as masks), the test console, the call log, the OpenAPI import and the
 * workspace's action secret.
 */
export function createActionsService(deps: {
  db: Db
  repo: ActionsRepo
  cipher: Cipher
  clock: Clock
  audit: AuditPort
  runner: Runner
  /** the outbound guard's setting (CRAWLER_ALLOW_PRIVATE_NETWORKS): when off, a literal private host is refused at save time too */
  allowPrivateNetworks: boolean
}) {
  const { repo, cipher, clock, audit, runner } = deps

  async function actionOr404(tenantId: string, id: string, scope: BotScope = null) {
    const a = await repo.find(tenantId, id)
    if (!a || !visibleTo(scope, a)) throw notFound('Action not found')
    return a
  }

  /** The stored form of a definition (a whole one: the current row merged with the patch), or a 422 naming the field. */
  async function toData(tenantId: string, input: ActionInput, current: ActionRow | null): Promise<ActionData> {
    const parameters = input.parameters ? normalizeParameters(input.parameters) : (current?.parameters ?? [])
    const names = new Set(parameters.map((p) => p.name))
    const url = input.url ?? current!.url
    const headers = input.headers ?? current?.headers ?? {}
    const body_template = input.body_template !== undefined ? input.body_template : (current?.body_template ?? null)
    const enabled = input.enabled ?? current?.enabled ?? false
    const urlProblem = urlTemplateProblem(url, true)
    if (urlProblem) throw invalid(['url'], urlProblem)
    if (enabled && !isAbsolute(url)) throw invalid(['url'], 'The URL is relative: make it absolute (https://...) before enabling the action')
    // a literal address is known now (a host name is judged at each call, where DNS answers are pinned)
    const literal = isAbsolute(url) ? literalAddressProblem(probeUrl(url), deps.allowPrivateNetworks) : null
    if (literal) throw invalid(['url'], `The URL points to ${literal.describe()}, which actions may not reach`)
    const unknown = unknownPlaceholders({ url, headers, body_template }, names)
    if (unknown) throw invalid(unknown.loc, `The template names {${unknown.name}}, which is no parameter of the action`)

    let secrets: Record<string, string> = current ? runner.secretsOf(current) : {}
    if (input.secrets) secrets = { ...secrets, ...input.secrets }
    parameters.forEach((p, i) => {
      if (p.source === 'secret' && secrets[p.name] === undefined)
        throw invalid(['parameters', i, 'name'], `${p.name} is a secret parameter: give its value in secrets`)
    })
    const botIds = input.bot_ids !== undefined ? input.bot_ids : (current?.bot_ids ?? null)
    if (input.bot_ids) {
      const own = await repo.ownBots(tenantId, input.bot_ids)
      const foreign = input.bot_ids.find((b) => !own.has(b))
      if (foreign) throw invalid(['bot_ids'], `No bot ${foreign} in this workspace`)
    }
    return {
      name: input.name ?? current!.name,
      description: (input.description ?? current?.description ?? '').trim(),
      method: (input.method ?? current?.method ?? 'GET') as ActionMethod,
      url,
      headers,
      body_template,
      parameters,
      kind: (input.kind ?? current?.kind ?? 'read') as ActionKind,
      bot_ids: botIds,
      enabled,
      response_fields: input.response_fields ?? current?.response_fields ?? [],
      timeout_ms: input.timeout_ms ?? current?.timeout_ms ?? DEFAULT_TIMEOUT_MS,
      secrets_enc: Object.keys(secrets).length ? cipher.encrypt(JSON.stringify(secrets)) : null,
      // nothing of a short secret is shown: its last four characters are most of it
      secret_hints: Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, v.length <= SHORT_SECRET_CHARS ? '' : lastChars(v)])),
    }
  }

  const record = (tenantId: string, actor: Actor, action: string, id: string | null, detail?: Record<string, unknown>) =>
    audit.record(tenantId, { actorUserId: actor.userId, ip: actor.ip, action, itemType: 'action', itemId: id, ...(detail ? { detail } : {}) })

  async function roomFor(tenantId: string, n: number) {
    if ((await repo.count(tenantId)) + n > MAX_ACTIONS) throw conflict(`A workspace has at most ${MAX_ACTIONS} actions`, 'too_many_actions')
  }

  return {
    list: async (tenantId: string, scope: BotScope) => (await repo.list(tenantId)).filter((a) => visibleTo(scope, a)).map(presentAction),

    get: async (tenantId: string, id: string, scope: BotScope) => presentAction(await actionOr404(tenantId, id, scope)),

    async create(tenantId: string, input: ActionInput & { name: string; url: string }, actor: Actor) {
      await roomFor(tenantId, 1)
      const row = await repo.insert(tenantId, await toData(tenantId, input, null), clock.now())
      // every call is signed, the test console's first one too: the first action gives the workspace its secret
      await runner.signingSecret(tenantId)
      await record(tenantId, actor, 'created', row.id)
      return presentAction(row)
    },

    async update(tenantId: string, id: string, input: ActionInput, actor: Actor) {
      const current = await actionOr404(tenantId, id)
      const row = await repo.update(tenantId, id, await toData(tenantId, input, current), clock.now())
      if (!row) throw notFound('Action not found')
      await record(tenantId, actor, 'updated', id, input.secrets ? { secrets_changed: Object.keys(input.secrets) } : undefined)
      return presentAction(row)
    },

    async remove(tenantId: string, id: string, actor: Actor) {
      if (!(await repo.remove(tenantId, id))) throw notFound('Action not found')
      await record(tenantId, actor, 'deleted', id)
    },

    /**
     * The request an action would send for these arguments (secrets masked), and only when `live` the
     * answer too. A live call is logged like any other.
     */
    async test(
      tenantId: string,
      id: string,
      body: { arguments: Record<string, unknown>; visitor_claims?: Record<string, unknown> | null; live?: boolean },
      scope: BotScope,
    ) {
      const action = await actionOr404(tenantId, id, scope)
      const secrets = runner.secretsOf(action)
      const built = buildRequest(action, body.arguments ?? {}, body.visitor_claims ?? null, secrets)
      if (!built.ok) throw invalid(built.argument ? ['arguments', built.argument] : ['arguments'], built.message)
      if (!body.live) return { request: built.masked, response: null, status: 'dry_run', model_view: null }
      if (!isAbsolute(built.request.url)) throw invalid(['live'], 'The URL is relative: make it absolute before a live test')
      const call = await repo.insertCall(tenantId, {
        actionId: action.id,
        sessionId: null,
        botId: null,
        status: 'running',
        arguments: built.logArgs,
        argumentsEnc: null,
        summary: 'test console',
        now: clock.now(),
      })
      const r = await runner.send(tenantId, action, call.id, built.request, body.visitor_claims ?? null)
      await runner.record(tenantId, action, { id: call.id, botId: null, sessionId: null }, r)
      return {
        request: built.masked,
        response: { status: r.httpStatus, body: r.maskedBody, latency_ms: r.latencyMs },
        status: r.status,
        model_view: r.modelView,
      }
    },

    async calls(tenantId: string, id: string, q: { cursor?: string; limit: number }, scope: BotScope) {
      await actionOr404(tenantId, id, scope)
      const rows = await repo.listCalls(tenantId, id, { before: q.cursor, limit: q.limit })
      return {
        items: rows.map((r) => ({
          id: r.id,
          session_id: r.session_id,
          status: r.status,
          http_status: r.http_status,
          latency_ms: r.latency_ms,
          arguments: r.arguments,
          created_at: r.created_at.toISOString(),
        })),
        next_cursor: rows.length === q.limit ? rows[rows.length - 1]!.seq : null,
      }
    },

    /** Actions from an OpenAPI document, all disabled; 422 with the document's problems. */
    async importOpenApi(tenantId: string, body: { spec: string; operations?: string[]; base_url?: string }, actor: Actor) {
      const drafts = importOperations(body.spec, { operations: body.operations, baseUrl: body.base_url })
      if (!drafts.ok) throw new ValidationError(['body', 'spec'], drafts.errors.slice(0, 20).join('; '), 'value_error')
      await roomFor(tenantId, drafts.actions.length)
      const taken = new Set((await repo.list(tenantId)).map((a) => a.name))
      const now = clock.now()
      const data: ActionData[] = []
      for (const d of drafts.actions) {
        let name = d.name
        for (let n = 2; taken.has(name); n++) name = `${d.name.slice(0, 60)}_${n}`
        taken.add(name)
        try {
          data.push(await toData(tenantId, { ...d, name, enabled: false }, null))
        } catch (err) {
          // the field stays named (url for a private server address); the message says which operation
          if (err instanceof ValidationError) throw new ValidationError(err.loc, `${d.name}: ${err.message}`, err.type)
          throw err
        }
      }
      const rows = await deps.db.transaction().execute(async (trx) => {
        const out: ActionRow[] = []
        for (const d of data) out.push(await repo.insert(tenantId, d, now, trx))
        return out
      })
      if (rows.length) await runner.signingSecret(tenantId)
      await record(tenantId, actor, 'imported', null, { count: rows.length })
      return { items: rows.map(presentAction) }
    },

    async secretStatus(tenantId: string) {
      const secret = decryptOrNull(cipher, (await repo.findSecret(tenantId))?.secret_enc)
      return { has_secret: !!secret, secret_hint: secret ? maskHint(lastChars(secret)) : null }
    },

    /** A new action secret, shown only here; calls are signed with it from now on. */
    async rotateSecret(tenantId: string, actor: Actor) {
      const secret = newActionSecret()
      await repo.putSecret(tenantId, cipher.encrypt(secret), clock.now(), true)
      await record(tenantId, actor, 'rotated_key', null, { item: 'action_signing_secret' })
      return { secret }
    },
  }
}

export type ActionsService = ReturnType<typeof createActionsService>
