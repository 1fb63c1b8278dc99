import { message } from '../shared/messages/catalogue.js'

/**
 * What the bot says when it hands a conversation to the support team (a ticket opened or added to), from the
 * message catalogue (shared/messages, #40) in the session's language. `{ticket}` is filled in.
 */

export type HandOffKey = 'no_answer' | 'user_request' | 'existing' | 'llm_unavailable' | 'answer_rejected' | 'manual'

export const handOffText = (key: HandOffKey, lang: string, ticket: string) => message(lang, `handoff.${key}`, { ticket })
