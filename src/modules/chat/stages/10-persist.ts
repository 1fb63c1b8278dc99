import { randomUUID } from 'node:crypto'
import type { Db } from '../../../db/client.js'
import type { QuestionOutcome, SessionOwner, SourceRef, TicketTrigger, TranscriptEntry } from '../../../db/schema/chat.js'
import type { HandOffInput } from '../../escalations/handoff.js'
import type { OutboundEvent } from '../../shared/events.port.js'
import { piiEvents } from '../../shared/pii-events.js'
import type { Redaction } from '../../shared/redaction.js'
import type { ChatRepo, SessionRow } from '../chat.repo.js'
import type { EvaluationTrace, TurnDeps, TurnResult } from '../turn.context.js'
import { isDraftAnswer, persistDraft } from './10-persist-draft.js'

/**
 * Stage 10: both messages, the session's summary, PII events, the question log and any ticket, in one
 * statement (a hand-off: after one read, or in a transaction when the session changed since, see HandOffPort.plan). The documents "actually cited" are the ones
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

/** A text on one line: its runs of whitespace made one space. */
export const collapse = (text: string) => text.replace(/\s+/g, ' ').trim()

/** A text's preview (its SQL twin: turn-write.ts previewSql). */
export const preview = (text: string, max = 200) => {
  const t = collapse(text)
  return t.length > max ? `${t.slice(0, max - 1)}…` : t
}

/** What a turn ends with, whichever way it went. */
export interface Finish {
  tenantId: string
  bot: { id: string }
  session: SessionRow
  /** The row version of a session this turn created (turn.ts), for its hand-off: nothing of it to read. */
  createdVersion?: string | null
  /** The visitor's message as stored; `messageId` when its files already point to it (stage 2c). */
  question: Redaction & { messageId?: string }
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
  /** Stored whoever owns the conversation (what the bot says to a closed chat); otherwise only while the bot does. */
  keepAnswer?: boolean
  /** An evaluation's dry run: nothing stored, no ticket, no event; what would have been is recorded there. */
  evaluation?: EvaluationTrace
  /** The session's language settled this turn (stage 1b), stored with the turn. */
  language?: SessionLanguage | null
  /** An e-mail bot in draft mode: an answer becomes a ticket's suggested reply (10-persist-draft.ts). */
  draft?: boolean
}

/** A session's language as stage 1b settled it, written by the turn's own statement (turn-write.ts). */
export type SessionLanguage = { language: string; source: string }

type PersistDeps = Pick<TurnDeps, 'db' | 'clock' | 'repo' | 'handOff' | 'events' | 'live'>

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
  if (f.evaluation) return dryRunFinish(f, f.evaluation)
  if (isDraftAnswer(f)) return persistDraft(deps, f)
  const { tenantId, session } = f
  const userId = f.question.messageId ?? randomUUID()
  const assistantId = randomUUID()
  const { asked, answered } = turnTimes(deps.clock)
  const cited = f.cited ?? []
  let text = f.text
  let ticketNumber = f.ticketNumber
  let delivered = f.deliveredToOperator ?? false
  // the bot's own answer is stored only while the bot owns the conversation (compare-and-set, see writeTurn)
  const onlyIfBot = !f.keepAnswer
  const turnWrite = () => ({
    sessionId: session.id,
    messages: [
      questionMessage(userId, session.id, f.question, asked),
      {
        id: assistantId,
        sessionId: session.id,
        role: 'assistant' as const,
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
    onlyIfBot,
    language: f.language ?? null,
  })
  const write = (trx?: Db) => deps.repo.writeTurn(tenantId, turnWrite(), trx)
  const handOff = f.handOff
  let owner: SessionOwner = session.owner
  let dropped = false
  const ends = !!f.chatEnded && !session.chat_ended && !!deps.events
  if (!handOff && !ends) {
    const w = await write()
    owner = w.owner
    dropped = !w.answered
  } else if (!handOff) {
    // the chat ends with this turn: its event commits with the turn
    await deps.db.transaction().execute(async (trx) => {
      const w = await write(trx)
      owner = w.owner
      dropped = !w.answered
      if (!dropped) await deps.events!.emit(tenantId, conversationEnded(session, 'visitor_done'), trx)
    })
  } else {
    const handOffInput = {
      session,
      botId: f.bot.id,
      trigger: handOff.trigger,
      primaryQuestion: f.question.text,
      primaryQuestionOriginalEnc: f.question.originalEnc,
      // the ticket's transcript: the session's messages (read by the hand-off with the rest it reads), then this question
      transcript: { plus: [{ role: 'user' as const, content: f.question.text, created_at: asked.toISOString() }] },
      evidence: handOff.evidence,
      language: handOff.language,
      say: handOff.say,
      followUp: { question: f.question },
    }
    // the common hand-off in two round trips: planned from a read, written with the turn in one statement that
    // writes only while the session is as read (else nothing, and the transaction below does it)
    const planned = ends ? null : await deps.handOff.plan(tenantId, { ...handOffInput, createdVersion: f.createdVersion ?? null })
    let written = false
    if (planned) {
      text = planned.text
      // how the hand-off was written, for whoever reads the turn's debug: with the turn, or by the transaction below
      f.debug.ticket = { ...planned.ticket, written: 'with_turn' }
      const w = await deps.repo.writeTurn(tenantId, {
        ...turnWrite(),
        onlyIfBot: false,
        ownerEvent: planned.ownerEvent,
        sessionFollowUp: planned.sessionFollowUp,
        handOff: { ...planned.write, previewText: collapse(text) },
      })
      if (w.written) {
        written = true
        const ticket = planned.done(w.ticketNumber)
        text = ticket.text
        if (ticket.created) ticketNumber = ticket.ticketNumber
        delivered = true
        f.debug.ticket = { number: ticket.ticketNumber, created: ticket.created, priority: ticket.priority, written: 'with_turn' }
        owner = ticket.owner
      } else {
        // nothing was written: the transaction below words the hand-off again (or stores the turn as a person's)
        text = f.text
        delete f.debug.ticket
      }
    }
    // a ticket needs the session lock (one open ticket per session) and the tenant's counter: a transaction
    if (!written)
      await deps.db.transaction().execute(async (trx) => {
        // the session locked, with what the hand-off reads (its tickets, its messages for the transcript), in one round trip
        const { locked, known } = await deps.handOff.lock(tenantId, session.id, trx)
        owner = locked?.owner ?? owner
        // a person took the conversation while this turn ran: their conversation, no hand-off of the bot's
        if (owner !== 'bot') {
          dropped = true
          await write(trx)
          return
        }
        // the ticket's transcript: the session's messages (read by the hand-off with the rest it reads), then this question
        const ticket = await deps.handOff.open(
          tenantId,
          // the owner change with its live event, and the session's follow-up, go with the turn's write below
          { ...handOffInput, locked, known, callerWritesSession: true },
          trx,
        )
        text = ticket.text
        if (ticket.created) ticketNumber = ticket.ticketNumber
        delivered = true
        f.debug.ticket = { number: ticket.ticketNumber, created: ticket.created, priority: ticket.priority, written: 'transaction' }
        // the hand-off's own words are the bot's last, said as the conversation goes to the team
        const w = await deps.repo.writeTurn(
          tenantId,
          { ...turnWrite(), onlyIfBot: false, ownerEvent: ticket.ownerEvent ?? null, sessionFollowUp: ticket.sessionFollowUp ?? null },
          trx,
        )
        owner = ticket.owner ?? w.owner
        if (ends) await deps.events!.emit(tenantId, conversationEnded(session, 'visitor_done'), trx)
      })
  }
  if (dropped) return deliveredToPerson(deps, { tenantId, session, question: f.question, messageId: userId, asked, owner, tokens: f.tokens })
  return {
    text,
    session_id: session.id,
    message_id: assistantId,
    chat_ended: owner !== 'bot' || (f.chatEnded ?? false),
    ...(ticketNumber ? { ticket_number: ticketNumber } : {}),
    delivered_to_operator: delivered,
    source_documents: documentIds(cited),
    sources: sourceRefs(cited),
    cited: cited.map((c) => ({ title: c.title.split(' — ')[0]!.slice(0, 300), url: c.url })),
    tokens_used: f.tokens,
    owner,
  }
}

/** Stage 10 of an evaluation's dry run: what would have been stored, recorded on the trace; nothing written. */
function dryRunFinish(f: Finish, trace: EvaluationTrace): TurnResult {
  const cited = f.cited ?? []
  trace.finish = { outcome: f.outcome, handedOff: !!f.handOff, cited, debug: f.debug }
  return {
    text: f.text,
    session_id: f.session.id,
    message_id: randomUUID(),
    chat_ended: !!f.handOff || (f.chatEnded ?? false),
    delivered_to_operator: !!f.handOff,
    source_documents: documentIds(cited),
    sources: sourceRefs(cited),
    // an uploaded document without a page too (the bot page's test mail lists every source, #52)
    cited: cited.map((c) => ({ title: c.title.split(' — ')[0]!.slice(0, 300), url: c.url })),
    tokens_used: f.tokens,
    owner: f.handOff ? 'queue' : 'bot',
  }
}

/**
 * A visitor's message that a person answers (the conversation is theirs, or became theirs while the bot was
 * writing, whose answer was dropped): it reaches the team's stream; nobody answers here.
 */
async function deliveredToPerson(
  deps: PersistDeps,
  p: { tenantId: string; session: SessionRow; question: Redaction; messageId: string; asked: Date; owner: SessionOwner; tokens: number },
): Promise<TurnResult> {
  if (deps.live) {
    const live = deps.live
    await deps.db
      .transaction()
      .execute((trx) =>
        live.messagePosted(
          p.tenantId,
          { id: p.messageId, sessionId: p.session.id, role: 'user', content: p.question.text, createdAt: p.asked, fromOperator: false },
          trx,
        ),
      )
  }
  return delivered(p.session.id, p.messageId, p.owner, p.tokens)
}

const delivered = (sessionId: string, messageId: string, owner: SessionOwner, tokens: number): TurnResult => ({
  text: '',
  session_id: sessionId,
  message_id: messageId,
  chat_ended: owner !== 'bot',
  delivered_to_operator: true,
  source_documents: [],
  sources: [],
  tokens_used: tokens,
  owner,
  delivered: true,
})

/** Stage 10 for a conversation a person owns: the visitor's message is stored and reaches the team, in one transaction. */
export async function persistForPerson(
  deps: PersistDeps,
  p: { tenantId: string; session: SessionRow; question: Redaction & { messageId?: string }; language?: SessionLanguage | null },
): Promise<TurnResult> {
  const id = p.question.messageId ?? randomUUID()
  const now = deps.clock.now()
  await deps.db.transaction().execute(async (trx) => {
    await deps.repo.writeTurn(
      p.tenantId,
      {
        sessionId: p.session.id,
        messages: [questionMessage(id, p.session.id, p.question, now)],
        lastQuestion: preview(p.question.text, 500),
        lastAnswerPreview: null,
        chatEnded: false,
        now,
        pii: piiEvents(p.question.counts, { action: 'redacted', direction: 'message', sessionId: p.session.id }),
        questionLog: null,
        language: p.language ?? null,
      },
      trx,
    )
    await deps.live?.messagePosted(
      p.tenantId,
      { id, sessionId: p.session.id, role: 'user', content: p.question.text, createdAt: now, fromOperator: false },
      trx,
    )
  })
  return delivered(p.session.id, id, p.session.owner, 0)
}

/** A failed turn still leaves the visitor's (redacted) message in the log, so an escalation has it. */
export async function persistQuestionOnly(
  deps: Pick<TurnDeps, 'clock' | 'repo' | 'log'>,
  tenantId: string,
  session: SessionRow,
  question: Redaction & { messageId?: string },
  language?: SessionLanguage | null,
): Promise<void> {
  const now = deps.clock.now()
  await deps.repo
    .writeTurn(tenantId, {
      sessionId: session.id,
      messages: [questionMessage(question.messageId ?? randomUUID(), session.id, question, now)],
      lastQuestion: preview(question.text, 500),
      lastAnswerPreview: null,
      chatEnded: false,
      now,
      pii: piiEvents(question.counts, { action: 'redacted', direction: 'message', sessionId: session.id }),
      questionLog: null,
      language: language ?? null,
    })
    .catch((err) => deps.log.warn({ err: { message: (err as Error).message } }, 'could not store the question of a failed turn'))
}
