import { hasCatalogue, message } from '../../shared/messages/catalogue.js'

/**
 * The texts the bot says itself (not generated): refusals, greetings, notes, from the one message catalogue
 * (shared/messages, #40) in the session's language; a language without a table gets English. `{bot}` is filled in.
 * The hand-off texts are the escalations module's (also from the catalogue).
 */

export type CannedKey =
  | 'refuse_injection'
  | 'refuse_off_topic'
  | 'greeting'
  | 'thanks'
  | 'chat_ended'
  | 'unverified_fallback'
  | 'unverified_note'
  | 'interrupted_note'

export function canned(key: CannedKey, lang: string, vars: { bot?: string } = {}): string {
  return message(lang, `chat.${key}`, { bot: vars.bot ?? 'us' })
}

export const hasCannedLanguage = hasCatalogue
