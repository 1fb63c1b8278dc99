import type { CallStatus } from '../../db/schema/actions.js'

/**
 * Actions as the chat turn sees them (the turn imports only this file's types; the actions module never
 * imports the chat). `identity` is always the session's verified identity (null: anonymous), never anything
 * the visitor or the model wrote.
 */
export interface OfferedTool {
  name: string
  description: string
  /** JSON Schema of the `model` parameters only */
  parameters: Record<string, unknown>
  kind: 'read' | 'write'
}

export type Identity = Record<string, unknown> | null

export interface ToolCallInput {
  botId: string
  sessionId: string
  /** the tool name the model called */
  name: string
  /** the model's arguments, as the JSON text it wrote */
  arguments: string
  identity: Identity
}

export type ToolOutcome =
  /**
   * a read ran: `content` is what the model is given (response fields, at most 8 KB); `recorded` settles once its
   * log entry and event are written (the turn awaits it before it ends, so the next model call need not)
   */
  | { kind: 'result'; callId: string; action: string; content: string; recorded?: Promise<void> }
  /** it ran and failed (timeout, 4xx/5xx, refused, blocked) */
  | { kind: 'failed'; callId: string | null; action: string; status: CallStatus; content: string; recorded?: Promise<void> }
  /** a write waits for the visitor's approval */
  | { kind: 'pending'; callId: string; action: string; summary: string; arguments: Record<string, unknown> }
  /** the model's call could not be made (unknown tool, arguments against the schema): told to the model */
  | { kind: 'invalid'; action: string; content: string }

export interface ConfirmOutcome {
  /** true when this request decided the call (ran it or cancelled it); false for a replay, which runs nothing */
  fresh: boolean
  status: CallStatus
  action: string
  summary: string
  /** what the workspace's API answered, as the model would see it (null: nothing ran or it failed) */
  content: string | null
}

/** A call as a conversation's transcript shows it: no secret, arguments redacted as the call log keeps them. */
export interface SessionCall {
  id: string
  /** null: the action was deleted since */
  action: string | null
  status: CallStatus
  http_status: number | null
  latency_ms: number | null
  arguments: Record<string, unknown>
  created_at: string
}

/** The workspace's action secrets over an answer: its stored text whole, its stream piece by piece (secret-mask.fns.ts). */
export interface AnswerMask {
  mask(text: string): string
  stream(): { push(piece: string): string; end(): string }
}

export interface ActionsPort {
  offer(tenantId: string, botId: string, identity: Identity): Promise<OfferedTool[]>
  call(tenantId: string, input: ToolCallInput): Promise<ToolOutcome>
  /** null: no such call in this session. A call that is no longer pending runs nothing and answers its status. */
  confirm(tenantId: string, input: { sessionId: string; callId: string; approve: boolean; identity: Identity }): Promise<ConfirmOutcome | null>
  /** The calls made in a conversation, oldest first (the caller has checked the viewer may see it). */
  sessionCalls(tenantId: string, sessionId: string): Promise<SessionCall[]>
  /**
   * The mask of every secret of the workspace's actions, and of each run of 8 or more of a secret's first characters,
   * in any encoding (null: the workspace stores none). An API may echo a secret in a form the response's masking did
   * not foresee, and the model may repeat it: the answer is masked too.
   */
  answerMask(tenantId: string): Promise<AnswerMask | null>
}

/**
 * The port as the turn gets it: no tools offered while the model server refuses tool calls (learned by the LLM
 * client, docs/model-servers.md), so a bot with enabled actions answers without them instead of failing.
 */
export function offeredWhileToolsWork(port: ActionsPort, toolsWork: () => boolean): ActionsPort {
  return {
    offer: (tenantId, botId, identity) => (toolsWork() ? port.offer(tenantId, botId, identity) : Promise.resolve([])),
    call: (tenantId, input) => port.call(tenantId, input),
    confirm: (tenantId, input) => port.confirm(tenantId, input),
    sessionCalls: (tenantId, sessionId) => port.sessionCalls(tenantId, sessionId),
    answerMask: (tenantId) => port.answerMask(tenantId),
  }
}
