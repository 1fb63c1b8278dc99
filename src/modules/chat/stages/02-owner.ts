import type { Turn, TurnDeps, TurnResult } from '../turn.context.js'
import { persistForPerson, persistTurn } from './10-persist.js'
import { canned } from './messages.js'

/**
 * Stage 2b: who answers. The bot answers a conversation it owns (null: the pipeline runs); a closed chat
 * gets the polite "has ended"; a conversation handed to a person (queue or human) stores the visitor's
 * message, which reaches the team at once, and nobody answers here (an e-mail the hand-off asked for still
 * goes on the ticket). That the bot still owns it is checked again when its answer is stored (stage 10).
 */
export async function answeredByOwner(deps: TurnDeps, t: Turn): Promise<TurnResult | null> {
  const { tenantId, bot, session, language } = t
  // the message as stored (stage 2c: the visitor's own text, its files pointing to it)
  const question = t.stored ?? t.question
  if (session.owner === 'closed' || session.chat_ended) {
    const base = { tenantId, bot, session, question, outcome: null, tokens: 0, language: t.lang?.store }
    const r = await persistTurn(deps, { ...base, text: canned('chat_ended', language), debug: { ...t.debug, closed: true }, keepAnswer: true })
    t.reply(r.text)
    return { ...r, chat_ended: true }
  }
  if (session.owner === 'bot') return null
  if (session.awaiting) await deps.handOff.onAwaiting({ tenantId, session, message: question })
  return persistForPerson(deps, { tenantId, session, question, language: t.lang?.store })
}
