import { randomBytes } from 'node:crypto'
import { SignJWT } from 'jose'
import { Webhook } from 'standardwebhooks'
import type { Db } from '../../db/client.js'
import type { CallStatus } from '../../db/schema/actions.js'
import type { Clock } from '../../lib/clock.js'
import { decryptOrNull, type Cipher } from '../../lib/crypto.js'
import type { EventsPort } from '../shared/events.port.js'
import { redact } from '../tenants/privacy/pii.fns.js'
import { cutBytes, LOG_EXCERPT_CHARS, modelView } from './actions.fns.js'
import type { ActionRow, ActionsRepo } from './actions.repo.js'
import type { ActionSender, SendResult } from './actions.sender.js'
import { maskAll, type BuiltRequest } from './request.fns.js'

/** How long an X-Visitor-Token is valid. */
export const VISITOR_TOKEN_SECONDS = 60

export interface RunResult extends SendResult {
  /** the answer with secret values masked */
  maskedBody: string | null
  /** what the model is given: the response fields, at most 8 KB (null: nothing useful came back) */
  modelView: string | null
}

/** The workspace's action secret's key bytes (the base64 after `whsec_`), the HS256 key of the visitor token. */
const keyBytes = (secret: string) => Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
export const newActionSecret = () => `whsec_${randomBytes(32).toString('base64')}`

/**
 * Sends an action's request and logs it: signed with the Standard Webhooks headers under the workspace's
 * action secret (webhook-id is the call id), `X-Visitor-Token` (HS256 JWT over the same key, 60 s, the
 * verified claims) when the visitor is identified, `Idempotency-Key: <call id>` on a write. Nothing here
 * writes a secret value anywhere: answers are masked before they are kept or shown.
 */
export function createRunner(deps: {
  db: Db
  repo: ActionsRepo
  cipher: Cipher
  clock: Clock
  /** the time written into webhook-timestamp and the token: the receiver compares it with its own wall clock */
  wallClock: Clock
  sender: ActionSender
  events: EventsPort
}) {
  const { db, repo, cipher, clock, sender, events } = deps

  async function signingSecret(tenantId: string): Promise<string> {
    const found = decryptOrNull(cipher, (await repo.findSecret(tenantId))?.secret_enc)
    if (found) return found
    // calls are always signed: a workspace that never set a secret gets one (POST /actions/signing-secret shows a new one)
    return cipher.decrypt(await repo.putSecret(tenantId, cipher.encrypt(newActionSecret()), clock.now(), false))
  }

  const secretsOf = (row: Pick<ActionRow, 'secrets_enc'>): Record<string, string> => {
    const plain = decryptOrNull(cipher, row.secrets_enc)
    return plain ? (JSON.parse(plain) as Record<string, string>) : {}
  }

  async function visitorToken(secret: string, claims: Record<string, unknown>, action: string, callId: string, at: Date): Promise<string> {
    const iat = Math.floor(at.getTime() / 1000)
    const { exp: _exp, iat: _iat, ...rest } = claims
    return new SignJWT({ ...rest, action })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(claims.user_id ?? ''))
      .setJti(callId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + VISITOR_TOKEN_SECONDS)
      .sign(keyBytes(secret))
  }

  /**
   * Signs the call (the headers every call gets: signature, visitor token, idempotency key), sends it and masks the
   * answer. `secretP`: the workspace's action secret when the caller started reading it already (beside its own writes).
   */
  async function send(
    tenantId: string,
    action: ActionRow,
    callId: string,
    req: BuiltRequest,
    claims: Record<string, unknown> | null,
    secretP?: Promise<string>,
  ): Promise<RunResult> {
    const secrets = secretsOf(action)
    const secret = await (secretP ?? signingSecret(tenantId))
    const at = deps.wallClock.now()
    const signed: Record<string, string> = {
      'webhook-id': callId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(callId, at, req.body ?? ''),
    }
    if (req.body !== null && !Object.keys(req.headers).some((h) => h.toLowerCase() === 'content-type')) signed['content-type'] = 'application/json'
    if (claims?.user_id !== undefined) signed['x-visitor-token'] = await visitorToken(secret, claims, action.name, callId, at)
    if (action.kind === 'write') signed['idempotency-key'] = callId
    const res = await sender.send({ ...req, headers: { ...req.headers, ...signed } }, action.timeout_ms)
    const maskedBody = res.body === null ? null : maskAll(res.body, secrets)
    const view = res.status === 'ok' && maskedBody !== null ? modelView(maskedBody, action.response_fields) : null
    return { ...res, maskedBody, modelView: view }
  }

  /** The call's outcome in the log (its body redacted and cut) and the `action.called` event, committed together. */
  async function record(tenantId: string, action: ActionRow, call: { id: string; botId: string | null; sessionId: string | null }, r: RunResult) {
    const excerpt = r.maskedBody === null ? null : redact(cutBytes(r.maskedBody, LOG_EXCERPT_CHARS * 2).slice(0, LOG_EXCERPT_CHARS)).text
    const status: CallStatus = r.status
    await db.transaction().execute(async (trx) => {
      await repo.finishCall(
        tenantId,
        call.id,
        { status, httpStatus: r.httpStatus, latencyMs: r.latencyMs, responseExcerpt: excerpt, error: r.error },
        clock.now(),
        trx,
      )
      await events.emit(
        tenantId,
        {
          type: 'action.called',
          botId: call.botId,
          data: {
            call_id: call.id,
            action_id: action.id,
            action: action.name,
            kind: action.kind,
            session_id: call.sessionId,
            status,
            http_status: r.httpStatus,
            latency_ms: r.latencyMs,
          },
        },
        trx,
      )
    })
  }

  return { signingSecret, secretsOf, send, record }
}

export type Runner = ReturnType<typeof createRunner>
