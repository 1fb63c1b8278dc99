import type { Db } from '../../db/client.js'
import type { Clock } from '../../lib/clock.js'
import { decryptOrNull as decrypt, type Cipher } from '../../lib/crypto.js'
import type { EmailService } from '../mailer/mailer.service.js'
import { localeLanguage, visitorLanguage } from '../shared/language.js'
import type { TenantsService } from '../tenants/tenants.service.js'
import { emailReplyMail, operatorReplyMail } from './escalations.fns.js'
import type { EscalationsRepo } from './escalations.repo.js'

/**
 * The job that decides an operator reply's mail (`escalations.reply_mail`), apart from the ticket workflows: the
 * decision and the mail's enqueueing commit together, under the reply's row lock, so however often it runs (a
 * retry, a restart, two workers) at most one mail is queued.
 */
export function createReplyMailDecider(deps: {
  db: Db
  clock: Clock
  cipher: Cipher
  repo: EscalationsRepo
  email: Pick<EmailService, 'queue'>
  tenants: Pick<TenantsService, 'notificationAddress'>
}) {
  const { db, clock, cipher, repo, email, tenants } = deps
  const decryptOrNull = (enc: string | null | undefined) => decrypt(cipher, enc)
  /**
   * At the end of a reply's grace period: one mail with every reply of the session the visitor has not seen
   * (those written since are in it too), so quick messages make one mail per grace period, not one each.
   * Locks the session's pending replies in one order, so two jobs of a session cannot wait on each other.
   */
  return async function decideReplyMail(p: { tenantId: string; replyId: string }) {
    const replyTo = await tenants.notificationAddress(p.tenantId)
    await db.transaction().execute(async (trx) => {
      const sessionId = await repo.replySession(p.tenantId, p.replyId, trx)
      const group = sessionId ? await repo.pendingSessionReplies(p.tenantId, sessionId, trx) : []
      if (sessionId && !group.some((g) => g.id === p.replyId)) return
      const r = await repo.lockReply(p.tenantId, p.replyId, trx)
      if (!r || r.mail_status !== 'pending') return
      const now = clock.now()
      const replies = sessionId ? group : [{ id: r.id, text: r.reply_text, at: r.reply_at, message_id: r.message_id }]
      const readAt = r.read_at ? new Date(r.read_at).getTime() : null
      const unseen = replies.filter((x) => x.at && x.text != null && !(readAt !== null && readAt >= new Date(x.at).getTime()))
      const decide = (ids: string[], status: 'read' | 'no_email' | 'sent') => Promise.all(ids.map((id) => repo.decideReply(p.tenantId, id, status, now, trx)))
      const unseenIds = new Set(unseen.map((x) => x.id))
      const rest = replies.filter((x) => !unseenIds.has(x.id))
      await decide(
        rest.filter((x) => x.at && x.text != null).map((x) => x.id),
        'read',
      )
      await decide(
        rest.filter((x) => !x.at || x.text == null).map((x) => x.id),
        'no_email',
      )
      if (!unseen.length) return
      const to = decryptOrNull(r.user_email_enc) ?? decryptOrNull(r.visitor_email_enc)
      if (!to) return decide([...unseenIds], 'no_email')
      // the conversation's language once known (#40), else the browser's, else the question's
      const language = r.language ?? localeLanguage(r.locale) ?? visitorLanguage(r.primary_question, null)
      const text = unseen.map((x) => x.text).join('\n\n')
      // a reply still pending on an e-mail session (queued before such replies were mailed at once): as written
      const mail =
        r.channel === 'email' && sessionId
          ? emailReplyMail({ ticket_number: r.ticket_number, reply: text, author: await repo.replyAuthor(p.tenantId, sessionId, null, trx) })
          : operatorReplyMail({ ticket_number: r.ticket_number, reply: text, question: r.primary_question, language })
      await decide([...unseenIds], 'sent')
      const dedupeKey = `operator-reply-mail:${sessionId ?? 'ticket'}:${unseen[0]!.id}`
      // the replies' files (an operator's attachments) are attached when the mail is sent
      const messageIds = unseen.flatMap((x) => (x.message_id ? [x.message_id] : []))
      const files = messageIds.length ? { files: { tenantId: p.tenantId, messageIds } } : {}
      await email.queue(
        { to, ...mail, ...files, ...(replyTo ? { replyTo } : {}) },
        { tenantId: p.tenantId, dedupeKey, ...(sessionId ? { sessionId } : {}) },
        trx,
      )
    })
  }
}
