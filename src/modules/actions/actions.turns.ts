import { addSeconds, type Clock } from '../../lib/clock.js'
import type { Cipher } from '../../lib/crypto.js'
import { callSummary } from './actions.fns.js'
import type { ActionsPort, AnswerMask, Identity, OfferedTool, SessionCall, ToolOutcome } from './actions.port.js'
import type { ActionRow, ActionsRepo } from './actions.repo.js'
import type { Runner } from './actions.runner.js'
import { buildRequest, toolSchema } from './request.fns.js'
import { createStreamMasker, maskAll } from './secret-mask.fns.js'
import { isAbsolute } from './templates.fns.js'

/** Whether a session may be offered the action: enabled, absolute URL, and an identity when a parameter needs one. */
const offerable = (a: ActionRow, identity: Identity) =>
  a.enabled && isAbsolute(a.url) && (identity !== null || !a.parameters.some((p) => p.source === 'visitor'))

/** At most this many calls of one conversation in its transcript (4 a turn: a long conversation). */
export const SESSION_CALLS_MAX = 400

/** An answer also loses each run of this many of a secret's first characters (a secret cut short is still most of it). */
export const ANSWER_PREFIX_CHARS = 8

/** How long a write waits for the visitor's approval; later it is cancelled and runs nothing. */
export const APPROVAL_SECONDS = 15 * 60

const failureText = (status: string, action: string) =>
  `The call to ${action} failed (${status}). Tell the visitor it could not be done right now and offer a person from the support team.`

/**
 * The chat's port: which actions a turn may offer as tools, running a read at once, holding a write until the
 * visitor approves it, and running an approved write exactly once.
 */
export function createActionsPort(deps: { repo: ActionsRepo; cipher: Cipher; clock: Clock; runner: Runner }): ActionsPort {
  const { repo, cipher, clock, runner } = deps

  /**
   * Sends the call; its log entry and `action.called` event are written while the caller goes on (`recorded`), so
   * the turn's next model call does not wait for them. Whoever runs it awaits `recorded` before it is done.
   */
  async function run(
    tenantId: string,
    action: ActionRow,
    call: { id: string; botId: string | null; sessionId: string | null },
    args: Record<string, unknown>,
    identity: Identity,
    secretP?: Promise<string>,
  ) {
    const built = buildRequest(action, args, identity, runner.secretsOf(action))
    const r = built.ok
      ? await runner.send(tenantId, action, call.id, built.request, identity, secretP)
      : { status: 'refused' as const, httpStatus: null, body: null, latencyMs: 0, error: built.message, maskedBody: null, modelView: null }
    const recorded = runner.record(tenantId, action, call, r)
    // handled here so a failure waits for the caller's await instead of being an unhandled rejection meanwhile
    recorded.catch(() => {})
    return { r, recorded }
  }

  return {
    async offer(tenantId, botId, identity): Promise<OfferedTool[]> {
      const rows = await repo.forBot(tenantId, botId)
      return rows
        .filter((a) => offerable(a, identity))
        .map((a) => ({ name: a.name, description: a.description || a.name, parameters: toolSchema(a.parameters), kind: a.kind }))
    },

    async call(tenantId, input): Promise<ToolOutcome> {
      const action = (await repo.forBot(tenantId, input.botId)).find((a) => a.name === input.name && offerable(a, input.identity))
      if (!action) return { kind: 'invalid', action: input.name, content: `There is no tool named ${input.name}.` }
      let args: Record<string, unknown>
      try {
        const parsed = JSON.parse(input.arguments || '{}') as unknown
        args = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {}
      } catch {
        return { kind: 'invalid', action: action.name, content: 'The arguments were not valid JSON.' }
      }
      // only the model's own parameters are taken from its arguments; visitor values come from the identity
      const built = buildRequest(action, args, input.identity, runner.secretsOf(action))
      if (!built.ok && built.unsafe) {
        // never sent: logged as refused and told to the visitor as any failed call, with a person offered
        const base = { actionId: action.id, sessionId: input.sessionId, botId: input.botId, arguments: built.logArgs ?? {}, now: clock.now() }
        const call = await repo.insertCall(tenantId, {
          ...base,
          summary: callSummary(action.description, action.name, {}),
          status: 'running',
          argumentsEnc: null,
        })
        const r = { status: 'refused' as const, httpStatus: null, body: null, latencyMs: 0, error: built.message, maskedBody: null, modelView: null }
        const recorded = runner.record(tenantId, action, { id: call.id, botId: input.botId, sessionId: input.sessionId }, r)
        recorded.catch(() => {})
        return { kind: 'failed', callId: call.id, action: action.name, status: r.status, content: failureText(r.status, action.name), recorded }
      }
      if (!built.ok) return { kind: 'invalid', action: action.name, content: `The call was not made: ${built.message}.` }
      const summary = callSummary(action.description, action.name, built.modelArgs)
      const base = { actionId: action.id, sessionId: input.sessionId, botId: input.botId, arguments: built.logArgs, summary, now: clock.now() }
      if (action.kind === 'write') {
        const call = await repo.insertCall(tenantId, { ...base, status: 'pending', argumentsEnc: cipher.encrypt(JSON.stringify(built.modelArgs)) })
        return { kind: 'pending', callId: call.id, action: action.name, summary, arguments: built.modelArgs }
      }
      // the signing secret is read while the call is logged, not after
      const secretP = runner.signingSecret(tenantId)
      secretP.catch(() => {})
      const call = await repo.insertCall(tenantId, { ...base, status: 'running', argumentsEnc: null })
      const callRef = { id: call.id, botId: input.botId, sessionId: input.sessionId }
      const { r, recorded } = await run(tenantId, action, callRef, built.modelArgs, input.identity, secretP)
      if (r.status === 'ok') return { kind: 'result', callId: call.id, action: action.name, content: r.modelView ?? '', recorded }
      return { kind: 'failed', callId: call.id, action: action.name, status: r.status, content: failureText(r.status, action.name), recorded }
    },

    async confirm(tenantId, input) {
      const now = clock.now()
      const to = input.approve ? 'running' : 'cancelled'
      const taken = await repo.takePending(tenantId, input.callId, input.sessionId, to, now, addSeconds(now, -APPROVAL_SECONDS))
      if (!taken) {
        // a replay, a second click, a cancelled or an expired call: nothing runs, the call's status is the answer
        const call = await repo.findCall(tenantId, input.callId)
        if (!call || call.session_id !== input.sessionId) return null
        if (call.status === 'pending') {
          await repo.expirePending(tenantId, call.id, now)
          return { fresh: false, status: 'cancelled', action: '', summary: call.summary, content: null }
        }
        const action = await repo.find(tenantId, call.action_id)
        return { fresh: false, status: call.status, action: action?.name ?? '', summary: call.summary, content: null }
      }
      const action = await repo.find(tenantId, taken.action_id)
      if (!action) return { fresh: true, status: 'cancelled', action: '', summary: taken.summary, content: null }
      if (!input.approve) return { fresh: true, status: 'cancelled', action: action.name, summary: taken.summary, content: null }
      const args = taken.arguments_enc ? (JSON.parse(cipher.decrypt(taken.arguments_enc)) as Record<string, unknown>) : {}
      const ready = action.enabled ? args : null
      const call = { id: taken.id, botId: taken.bot_id, sessionId: taken.session_id }
      if (!ready) {
        const r = { status: 'refused' as const, httpStatus: null, body: null, latencyMs: 0, error: 'action disabled', maskedBody: null, modelView: null }
        await runner.record(tenantId, action, call, r)
        return { fresh: true, status: 'refused', action: action.name, summary: taken.summary, content: null }
      }
      const { r, recorded } = await run(tenantId, action, call, ready, input.identity)
      await recorded
      return { fresh: true, status: r.status, action: action.name, summary: taken.summary, content: r.status === 'ok' ? r.modelView : null }
    },

    async answerMask(tenantId): Promise<AnswerMask | null> {
      const secrets = (await repo.list(tenantId)).flatMap((a) => Object.values(runner.secretsOf(a)))
      if (!secrets.some((s) => s.length > 0)) return null
      const opts = { minPrefix: ANSWER_PREFIX_CHARS }
      return { mask: (text) => maskAll(text, secrets, opts), stream: () => createStreamMasker(secrets, opts) }
    },

    async sessionCalls(tenantId, sessionId): Promise<SessionCall[]> {
      const rows = await repo.sessionCalls(tenantId, sessionId, SESSION_CALLS_MAX)
      return rows.map((r) => ({
        id: r.id,
        action: r.name ?? null,
        status: r.status,
        http_status: r.http_status,
        latency_ms: r.latency_ms,
        arguments: r.arguments,
        created_at: r.created_at.toISOString(),
      }))
    },
  }
}
