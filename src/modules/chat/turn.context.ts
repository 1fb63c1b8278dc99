import type { Logger } from 'pino'
import type { Config } from '../../config.js'
import type { Db } from '../../db/client.js'
import type { Clock } from '../../lib/clock.js'
import type { Cipher } from '../../lib/crypto.js'
import type { ActionsPort, AnswerMask, OfferedTool } from '../actions/actions.port.js'
import type { BotRow } from '../bots/bots.service.js'
import type { HandOffPort } from '../escalations/handoff.js'
import type { ProfileData } from '../knowledge/knowledge.fns.js'
import type { LlmClient } from '../llm/llm.js'
import type { RetrievalService } from '../retrieval/retrieval.service.js'
import type { Redaction } from '../shared/redaction.js'
import type { ChatRepo, SessionRow } from './chat.repo.js'
import type { ModelMeter } from './model-meter.js'
import type { EventsPort } from '../shared/events.port.js'
import type { LivePort } from '../shared/live.port.js'
import type { SessionOwner } from '../../db/schema/chat.js'
import type { LanguagesPort } from '../languages/languages.port.js'
import type { TurnLanguage } from './stages/01-language.js'
import type { HistoryTurn } from './stages/04-rewrite.js'
import type { CitableSource } from './stages/10-persist.js'
import type { AttachmentsPort } from '../attachments/attachments.port.js'
import type { TurnAttachments } from './stages/02-attachments.js'

/** What a turn is given and what it yields: the chat routes and the widget use these. */
export type TurnEvent =
  | { type: 'status'; stage: 'thinking' | 'searching' | 'writing' }
  | { type: 'chunk'; text: string }
  /** a write action waits for the visitor's approval (POST /widget/actions/{call_id}/confirm) */
  | { type: 'confirm'; call_id: string; action: string; summary: string; arguments: Record<string, unknown> }

export interface TurnInput {
  tenantId: string
  bot: BotRow
  sessionId?: string | null
  message: string
  locale?: string | null
  /** A language the visitor chose (the widget's language menu): the session's language from this turn on. */
  language?: string | null
  channel: 'api' | 'widget' | 'email'
  /** Files uploaded to this session and sent with the message (stages/02-attachments.ts). */
  attachmentIds?: readonly string[]
  signal?: AbortSignal
  onEvent?: (e: TurnEvent) => void
  /**
   * A dry run for an evaluation (the evals module): the stages that would store or send something read this
   * switch and record here what they would have done instead (no session, messages, ticket, question log,
   * event or action call).
   */
  evaluation?: EvaluationTrace
  /**
   * An e-mail bot in draft mode (issue 52): an answer is not stored as the bot's, a ticket (`email_draft`) opens, and
   * the answer comes back as `draft` for the ticket's suggested reply. Hand-offs and refusals go as usual.
   */
  draft?: boolean
}

/** What a dry run is given (the earlier turns, the visitor's claims) and what its stages record. */
export interface EvaluationTrace {
  history: HistoryTurn[]
  claims: Record<string, unknown> | null
  /** stage 8: the passages given to the answer model */
  offered: CitableSource[]
  /** stage 8 (tools): the calls the model asked for, none of them made */
  actions: { name: string; arguments: Record<string, unknown> }[]
  /** stage 10: what would have been stored */
  finish?: { outcome: string | null; handedOff: boolean; cited: CitableSource[]; debug: Record<string, unknown> }
}

export interface TurnResult {
  text: string
  session_id: string
  message_id: string
  chat_ended: boolean
  ticket_number?: string
  delivered_to_operator: boolean
  source_documents: string[]
  sources: { title: string; url: string }[]
  tokens_used: number
  /** a write action the visitor is asked to approve in this turn */
  pending_action?: { call_id: string; action: string; summary: string; arguments: Record<string, unknown> }
  /** Who answers the conversation after this turn (the API's chat_ended is owner != bot). */
  owner: SessionOwner
  /** The visitor's message went to the person who owns the conversation; nobody answered it here. */
  delivered?: boolean
  /** The session's language once known (#40). */
  language?: string
  /** The answer's cited sources, those without a page (an uploaded document) too: title and URL or null. */
  cited?: { title: string; url: string | null }[]
  /** With `draft`: the answer the bot wrote and did not send, with what it cited (stages/10-persist-draft.ts). */
  draft?: { text: string; cited: CitableSource[] }
}

export type ChatConfig = Pick<
  Config,
  | 'CHAT_MODEL'
  | 'GUARD_MODEL'
  | 'GUARDS_ENABLED'
  | 'GUARD_INJECTION_ENABLED'
  | 'GUARD_RELEVANCE_ENABLED'
  | 'GUARD_HUMAN_ENABLED'
  | 'GUARD_TIMEOUT_MS'
  | 'VALIDATION_ENABLED'
  | 'CHAT_SPECULATIVE_ANSWER'
  | 'CHAT_EARLY_ANSWER_FROM_BM25'
  | 'CHAT_FIRST_TOKEN_TIMEOUT_MS'
  | 'CHAT_TIMEOUT_MS'
  | 'CHAT_MAX_ANSWER_TOKENS'
  | 'CHAT_HISTORY_TURNS'
  | 'CHAT_HISTORY_MESSAGE_CHARS'
  | 'RETRIEVAL_TOP_K'
  | 'RETRIEVAL_SOURCE_TOKENS'
  | 'RETRIEVAL_MIN_SCORE'
  | 'RETRIEVAL_CAVEAT_SCORE'
  | 'RETRIEVAL_FLOOR_LEXICAL'
  | 'RETRIEVAL_QUERY_REWRITE'
  | 'RETRIEVAL_TRANSLATED_WEIGHT'
  | 'RETRIEVAL_FLOOR_COSINE'
  | 'EMBEDDING_MODEL'
  | 'FAQ_DIRECT_SCORE'
  | 'FAQ_CONTEXT_SCORE'
>

/** What the turn pipeline stands on; the stages take the parts they use. */
export interface TurnDeps {
  db: Db
  clock: Clock
  cipher: Cipher
  log: Pick<Logger, 'info' | 'warn'>
  llm: LlmClient
  repo: ChatRepo
  /** The escalations module's port: tickets, hand-off texts and what follows a hand-off. */
  handOff: Pick<HandOffPort, 'open' | 'onAwaiting' | 'lock' | 'plan'>
  retrieval: Pick<RetrievalService, 'search' | 'probeFloor'>
  config: ChatConfig
  /** The tenant's settings a turn needs (the wiring passes a cached read). */
  tenantSettings: ChatRepo['tenantSettings']
  /** The tenant's knowledge profile (product name, topics, glossary), for the guard and the prompt. */
  profileFor?: (tenantId: string) => Promise<ProfileData | null>
  /** Measures the time a turn waits on the model (see model-meter.ts): each turn runs with its meter's client as `llm`. */
  meter?: Pick<ModelMeter, 'start'>
  /** Told each stage's time at the end of a turn (the Prometheus stage histogram). */
  observeStage?: (stage: string, ms: number) => void
  /** The outbound events outbox (conversation.ended), written in the turn's transaction. */
  events?: EventsPort
  /** The actions module's port: the bot's actions as tools (stages/08-tools.ts). */
  actions?: ActionsPort
  /** The live conversation (a visitor's message to a person reaches the team's stream), in the turn's transaction. */
  live?: Pick<LivePort, 'messagePosted'>
  /** The languages module's port: the workspace's settings, storing a session's language (stages/01-language.ts). */
  languages?: LanguagesPort
  /** The attachments module's port: the files a message sends (stages/02-attachments.ts). */
  attachments?: AttachmentsPort
}

/** Timings of the stages of one turn, in ms. */
export class Stopwatch {
  readonly timings: Record<string, number> = {}
  private readonly start = performance.now()
  async time<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t = performance.now()
    try {
      return await fn()
    } finally {
      this.timings[name] = Math.round((performance.now() - t) * 100) / 100
    }
  }
  total() {
    return Math.round((performance.now() - this.start) * 100) / 100
  }
}

/** One turn as it moves through the stages: who asks what, and what it has cost so far. */
export interface Turn {
  input: TurnInput
  tenantId: string
  bot: BotRow
  apiKey: string
  session: SessionRow
  newSession: boolean
  /** The row version (xmin) of a session this turn created: a hand-off then has nothing of it to read (HandOffPort.plan). */
  createdVersion: string | null
  /** Stage 2: the visitor's message, redacted (from stage 2c on, followed by its files' text). */
  question: Redaction
  /** Stage 2c: the message as stored when files came with it (the visitor's text, the id the files point to). */
  stored?: Redaction & { messageId?: string }
  /** Stage 2c: the files sent with the message. */
  attachments?: TurnAttachments
  language: string
  /** Stage 1b: the session's language, where it came from, the knowledge's (absent: a turn built without the languages port). */
  lang?: TurnLanguage
  /** Stage 5c: the question translated into the knowledge's language, when it was. */
  translatedQuestion?: string
  /** Stored with the answer (timings, verdicts, evidence ids); never shown to the visitor. */
  debug: Record<string, unknown>
  tokens: number
  sw: Stopwatch
  modelMs: () => number
  emit: (e: TurnEvent) => void
  /** Sends a piece of the answer to a streaming client. */
  reply: (text: string) => void
  /** The actions this turn offers the model as tools (none: the turn runs as without actions). */
  tools: OfferedTool[]
  /** Set with the tools (stage 8): the workspace's action secrets, masked in the answer streamed and stored. */
  answerMask?: AnswerMask | null
}
