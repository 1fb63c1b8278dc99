import { message } from '../../shared/messages/catalogue.js'

/**
 * What the bot says itself around actions (not generated): a write to approve, a call that failed (with a
 * person offered, never silence), and the outcome of an approval; from the message catalogue (shared/messages).
 */
type Key = 'confirm' | 'failed' | 'done' | 'cancelled'

export const actionText = (key: Key, lang: string, summary = '') => message(lang, `action.${key}`, { summary })
