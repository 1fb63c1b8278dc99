import type { Db } from '../../../db/client.js'
import type { Cipher } from '../../../lib/crypto.js'
import { awaitingAfterHandOff, extractEmail, followUpText } from '../../escalations/escalations.fns.js'
import type { Redaction } from './redact.js'

/**
 * After a hand-off in a turn (inside its transaction, before the notification job can read the ticket):
 * a ticket without an e-mail takes one the visitor already wrote in this conversation (kept encrypted,
 * redacted in the text); then the bot asks for an e-mail when there still is none, else whether there is
 * anything else, and the session remembers what it waits for. The visitor's next message is handled by
 * the escalations module (chat.service `awaiting`).
 */
export async function afterEscalation(
  trx: Db,
  cipher: Pick<Cipher, 'encrypt' | 'decrypt'>,
  p: { tenantId: string; sessionId: string; ticket: { id: string; user_email_enc: string | null }; question: Redaction; language: string; text: string },
): Promise<string> {
  let emailKnown = !!p.ticket.user_email_enc
  if (!emailKnown) {
    const earlier = await trx
      .selectFrom('chat_messages')
      .select('content_original_enc')
      .where('tenant_id', '=', p.tenantId)
      .where('session_id', '=', p.sessionId)
      .where('role', '=', 'user')
      .where('content_original_enc', 'is not', null)
      .orderBy('created_at', 'desc')
      .limit(20)
      .execute()
    for (const enc of [p.question.originalEnc, ...earlier.map((m) => m.content_original_enc)]) {
      if (!enc) continue
      let email: string | null = null
      try {
        email = extractEmail(cipher.decrypt(enc))
      } catch {
        continue
      }
      if (!email) continue
      const emailEnc = cipher.encrypt(email)
      await trx.updateTable('escalation_tickets').set({ user_email_enc: emailEnc }).where('tenant_id', '=', p.tenantId).where('id', '=', p.ticket.id).execute()
      await trx.updateTable('chat_sessions').set({ visitor_email_enc: emailEnc }).where('tenant_id', '=', p.tenantId).where('id', '=', p.sessionId).execute()
      emailKnown = true
      break
    }
  }
  const awaiting = awaitingAfterHandOff(emailKnown)
  await trx.updateTable('chat_sessions').set({ awaiting }).where('tenant_id', '=', p.tenantId).where('id', '=', p.sessionId).execute()
  return `${p.text} ${followUpText(awaiting === 'email' ? 'ask_email' : 'anything_else', p.language)}`
}
