import { randomUUID } from 'node:crypto'
import type { Db } from '../../../db/client.js'
import type { QuestionOutcome, SourceRef, TicketTrigger, TranscriptEntry } from '../../../db/schema/chat.js'
import type { HandOffInput } from '../../escalations/handoff.js'
import type { OutboundEvent } from '../../shared/events.port.js'
import { piiEvents } from '../../shared/pii-events.js'
import type { Redaction } from '../../shared/redaction.js'
import type { ChatRepo, SessionRow } from '../chat.repo.js'
import type { TurnDeps, TurnResult } from '../turn.context.js'

/**
 * Stage 10: both messages, the session's summary, PII events, the question log and any ticket, in one
 * statement (or one transaction when a ticket is opened). The documents "actually cited" are the ones
 * whose [n] the answer used; an answer without markers is attributed by word overlap instead, so a
 * model that forgets to cite does not leave the operator without sources.
 */

export interface CitableSource {
  n: number
  documentId: string | null
  title: string
  url: string | null
  text: string
}

const words = (t: string) => new Set((t.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? []).slice(0, 4000))

export function citedSources(answer: string, cited: number[], sources: CitableSource[]): CitableSource[] {
  const byN = new Map(sources.map((s) => [s.n, s]))
  let picked = [...new Set(cited)].map((n) => byN.get(n)).filter((s): s is CitableSource => !!s)
  if (picked.length === 0 && cited.length === 0) {
    const a = words(answer)
    if (a.size >= 3) {
      picked = sources
        .map((s) => {
          const w = words(s.text)
          let hit = 0
          for (const x of a) if (w.has(x)) hit++
          return { s, share: hit / a.size }
        })
        .filter((x) => x.share >= 0.5)
        .sort((x, y) => y.share - x.share)
        .slice(0, 3)
        .map((x) => x.s)
    }
  }
  return picked
}

/** Distinct document ids, in citation order. */
export function documentIds(sources: CitableSource[]): string[] {
  return [...new Set(sources.map((s) => s.documentId).filter((d): d is string => !!d))]
}

/** The visitor-facing source list: URL-backed documents only, one entry per URL. */
export function sourceRefs(sources: CitableSource[]): SourceRef[] {
  const seen = new Set<string>()
  const out: SourceRef[] = []
  for (const s of sources) {
    if (!s.url || seen.has(s.url)) continue
    seen.add(s.url)
    out.push({ title: s.title.split(' — ')[0]!.slice(0, 300), url: s.url })
  }
  return out
}

export const preview = (text: string, max = 200) => {
  const t = text.replace(/\s+/g, ' ').trim()
  return t.length > max ? `${t.slice(0, max - 1)}…` : t
}

/** What a turn ends with, whichever way it went. */
export interface Finish {
  tenantId: string
  bot: { id: string }
  session: SessionRow
  question: Redaction
  text: string
  outcome: QuestionOutcome | null
  trigger?: TicketTrigger | null
  bestScore?: number | null
  cited?: CitableSource[]
  tokens: number
  debug: Record<string, unknown>
  /** A hand-off in this turn: the ticket is opened in the same transaction as the turn's messages. */
  handOff?: { trigger: TicketTrigger; evidence: unknown[]; language: string; say: HandOffInput['say'] }
  chatEnded?: boolean
  deliveredToOperator?: boolean
  ticketNumber?: string
}

type PersistDeps = Pick<TurnDeps, 'db' | 'clock' | 'repo' | 'handOff' | 'events'>

/** The outbound event of a chat that ended (the visitor said goodbye, or a hand-off closed it). */
export const conversationEnded = (session: { id: string; bot_id: string }, reason: 'visitor_done' | 'handed_off'): OutboundEvent => ({
  type: 'conversation.ended',
  botId: session.bot_id,
  data: { session_id: session.id, bot_id: session.bot_id, reason },
})

const TRANSCRIPT_MESSAGES = 50

/** Turn timestamps: the answer always sorts after the question, even on a clock that stands still. */
function turnTimes(clock: TurnDeps['clock']) {
  const asked = clock.now()
  const answered = new Date(Math.max(clock.now().getTime(), asked.getTime() + 1))
  return { asked, answered }
}

/** The session's recent messages as a ticket keeps them (operator replies marked). */
export async function transcriptOf(repo: Pick<ChatRepo, 'recentMessages'>, tenantId: string, sessionId: string, trx: Db): Promise<TranscriptEntry[]> {
  const rows = await repo.recentMessages(tenantId, sessionId, TRANSCRIPT_MESSAGES, trx)
  return rows.map((m) => ({ role: m.from_operator ? 'operator' : m.role, content: m.content, created_at: m.created_at.toISOString() }))
}

const questionMessage = (id: string, sessionId: string, q: Redaction, createdAt: Date) => ({
  id,
  sessionId,
  role: 'user' as const,
  content: q.text,
  contentOriginalEnc: q.originalEnc,
  piiCounts: q.counts,
  createdAt,
})

export async function persistTurn(deps: PersistDeps, f: Finish): Promise<TurnResult> {
  const { tenantId, session } = f
  const userId = randomUUID()
  const assistantId = randomUUID()
  const { asked, answered } = turnTimes(deps.clock)
  const cited = f.cited ?? []
  let text = f.text
  let ticketNumber = f.ticketNumber
  let delivered = f.deliveredToOperator ?? false
  const write = (trx?: Db) =>
    deps.repo.writeTurn(
      tenantId,
      {
        sessionId: session.id,
        messages: [
          questionMessage(userId, session.id, f.question, asked),
          {
            id: assistantId,
            sessionId: session.id,
            role: 'assistant',
            content: text,
            sourceDocuments: documentIds(cited),
            sources: sourceRefs(cited),
            tokensUsed: f.tokens,
            debug: f.debug,
            createdAt: answered,
          },
        ],
        lastQuestion: preview(f.question.text, 500),
        lastAnswerPreview: preview(text),
        chatEnded: f.chatEnded ?? false,
        now: answered,
        pii: piiEvents(f.question.counts, { action: 'redacted', direction: 'message', sessionId: session.id }),
        questionLog: f.outcome
          ? {
              botId: f.bot.id,
              messageId: assistantId,
              question: f.question.text,
              outcome: f.outcome,
              trigger: f.trigger ?? f.handOff?.trigger ?? null,
              bestScore: f.bestScore ?? null,
            }
          : null,
      },
      trx,
    )
  const handOff = f.handOff
  const ends = !!f.chatEnded && !session.chat_ended && !!deps.events
  if (!handOff && !ends) {
    await write()
  } else if (!handOff) {
    // the chat ends with this turn: its event commits with the turn
    await deps.db.transaction().execute(async (trx) => {
      await write(trx)
      await deps.events!.emit(tenantId, conversationEnded(session, 'visitor_done'), trx)
    })
  } else {
    // a ticket needs the session lock (one open ticket per session) and the tenant's counter: a transaction
    await deps.db.transaction().execute(async (trx) => {
      await deps.repo.lockSession(tenantId, session.id, trx)
      const earlier = await transcriptOf(deps.repo, tenantId, session.id, trx)
      const transcript = [...earlier, { role: 'user', content: f.question.text, created_at: asked.toISOString() }]
      const ticket = await deps.handOff.open(
        tenantId,
        {
          session,
          botId: f.bot.id,
          trigger: handOff.trigger,
          primaryQuestion: f.question.text,
          primaryQuestionOriginalEnc: f.question.originalEnc,
          transcript,
          evidence: handOff.evidence,
          language: handOff.language,
          say: handOff.say,
          followUp: { question: f.question },
        },
        trx,
      )
      text = ticket.text
      if (ticket.created) ticketNumber = ticket.ticketNumber
      delivered = true
      f.debug.ticket = { number: ticket.ticketNumber, created: ticket.created, priority: ticket.priority }
      await write(trx)
      if (ends) await deps.events!.emit(tenantId, conversationEnded(session, 'visitor_done'), trx)
    })
  }
  return {
    text,
    session_id: session.id,
    message_id: assistantId,
    chat_ended: (f.chatEnded ?? false) || session.chat_ended,
    ...(ticketNumber ? { ticket_number: ticketNumber } : {}),
    delivered_to_operator: delivered,
    source_documents: documentIds(cited),
    sources: sourceRefs(cited),
    tokens_used: f.tokens,
  }
}

/** A failed turn still leaves the visitor's (redacted) message in the log, so an escalation has it. */
export async function persistQuestionOnly(
  deps: Pick<TurnDeps, 'clock' | 'repo' | 'log'>,
  tenantId: string,
  session: SessionRow,
  question: Redaction,
): Promise<void> {
  const now = deps.clock.now()
  await deps.repo
    .writeTurn(tenantId, {
      sessionId: session.id,
      messages: [questionMessage(randomUUID(), session.id, question, now)],
      lastQuestion: preview(question.text, 500),
      lastAnswerPreview: null,
      chatEnded: false,
      now,
      pii: piiEvents(question.counts, { action: 'redacted', direction: 'message', sessionId: session.id }),
      questionLog: null,
    })
    .catch((err) => deps.log.warn({ err: { message: (err as Error).message } }, 'could not store the question of a failed turn'))
}
