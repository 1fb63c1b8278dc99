import { randomUUID } from 'node:crypto'
import type { SessionOwner } from '../../../db/schema/chat.js'
import { piiEvents } from '../../shared/pii-events.js'
import type { TurnDeps, TurnResult } from '../turn.context.js'
import type { SessionRow } from '../chat.repo.js'
import type { QuestionOutcome } from '../../../db/schema/chat.js'
import type { Redaction } from '../../shared/redaction.js'
import type { SessionLanguage } from './10-persist.js'

/** The part of stage 10's Finish a draft reads (10-persist.ts imports this file: no value import back). */
interface Finish {
  tenantId: string
  bot: { id: string }
  session: SessionRow
  question: Redaction & { messageId?: string }
  text: string
  outcome: QuestionOutcome | null
  bestScore?: number | null
  cited?: { n: number; documentId: string | null; title: string; url: string | null; text: string }[]
  tokens: number
  debug: Record<string, unknown>
  handOff?: unknown
  evaluation?: unknown
  language?: SessionLanguage | null
  draft?: boolean
}

const documentIds = (sources: { documentId: string | null }[]) => [...new Set(sources.map((s) => s.documentId).filter((d): d is string => !!d))]
const preview = (text: string, max: number) => {
  const t = text.replace(/\s+/g, ' ').trim()
  return t.length > max ? `${t.slice(0, max - 1)}…` : t
}

type DraftDeps = Pick<TurnDeps, 'db' | 'clock' | 'repo' | 'handOff'>

/**
 * Whether a finished turn is a draft (an e-mail bot in `mode: draft`, issue 52 item 4): an answer the bot wrote,
 * which is not sent and never stored in the thread as the bot's message.
 */
export const isDraftAnswer = (f: Finish) =>
  !!f.draft && !f.evaluation && !f.handOff && (f.outcome === 'answered' || f.outcome === 'caveat') && f.text.trim().length > 0

/**
 * Stage 10 of a draft: the visitor's message stored, and a ticket opened (trigger `email_draft`) whose retrieval
 * evidence is what the draft cited first, then the rest of what was found; the bot's answer is handed back as
 * `draft` for the caller to keep as the ticket's suggested reply. No bot message, no hand-off notice in the thread.
 * A person who took the conversation meanwhile gets the message as any other (no ticket, no draft).
 */
export async function persistDraft(deps: DraftDeps, f: Finish): Promise<TurnResult> {
  const { tenantId, session } = f
  const userId = f.question.messageId ?? randomUUID()
  const now = deps.clock.now()
  const cited = f.cited ?? []
  const hits = ((f.debug.retrieval as { hits?: unknown[] } | undefined)?.hits ?? []) as { document_id?: string | null }[]
  const citedIds = new Set(documentIds(cited))
  const evidence = [...hits.filter((h) => h.document_id && citedIds.has(h.document_id)), ...hits.filter((h) => !h.document_id || !citedIds.has(h.document_id))]
  // a draft that cites what retrieval did not list (an FAQ answered directly): its sources are the evidence
  if (evidence.length === 0) for (const c of cited) evidence.push({ document_id: c.documentId, title: c.title, url: c.url, cited: true } as never)
  const question = {
    id: userId,
    sessionId: session.id,
    role: 'user' as const,
    content: f.question.text,
    contentOriginalEnc: f.question.originalEnc,
    piiCounts: f.question.counts,
    createdAt: now,
  }
  const write = {
    sessionId: session.id,
    messages: [question],
    lastQuestion: preview(f.question.text, 500),
    lastAnswerPreview: null,
    chatEnded: false,
    now,
    pii: piiEvents(f.question.counts, { action: 'redacted', direction: 'message', sessionId: session.id }),
    questionLog: {
      botId: f.bot.id,
      messageId: userId,
      question: f.question.text,
      outcome: 'escalated' as const,
      trigger: 'email_draft' as const,
      bestScore: f.bestScore ?? null,
    },
    language: f.language ?? null,
  }
  let owner: SessionOwner = session.owner
  let ticketNumber: string | null = null
  await deps.db.transaction().execute(async (trx) => {
    const { locked, known } = await deps.handOff.lock(tenantId, session.id, trx)
    owner = locked?.owner ?? owner
    if (owner !== 'bot') {
      await deps.repo.writeTurn(tenantId, { ...write, questionLog: null, onlyIfBot: false }, trx)
      return
    }
    const ticket = await deps.handOff.open(
      tenantId,
      {
        session,
        locked,
        known,
        botId: f.bot.id,
        trigger: 'email_draft',
        primaryQuestion: f.question.text,
        primaryQuestionOriginalEnc: f.question.originalEnc,
        transcript: { plus: [{ role: 'user', content: f.question.text, created_at: now.toISOString() }] },
        evidence,
        language: f.language?.language ?? 'en',
        say: 'user_request',
        followUp: null,
        callerWritesSession: true,
      },
      trx,
    )
    ticketNumber = ticket.ticketNumber
    owner = ticket.owner ?? 'queue'
    await deps.repo.writeTurn(
      tenantId,
      { ...write, onlyIfBot: false, ownerEvent: ticket.ownerEvent ?? null, sessionFollowUp: ticket.sessionFollowUp ?? null },
      trx,
    )
  })
  const drafted = ticketNumber !== null
  return {
    text: '',
    session_id: session.id,
    message_id: userId,
    chat_ended: owner !== 'bot',
    ...(ticketNumber ? { ticket_number: ticketNumber } : {}),
    delivered_to_operator: true,
    source_documents: [],
    sources: [],
    tokens_used: f.tokens,
    owner,
    ...(drafted ? { draft: { text: f.text, cited } } : { delivered: true }),
  }
}
