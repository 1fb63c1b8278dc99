import type { Db } from '../../db/client.js'
import type { JobQueue } from '../../jobs/queue.js'
import type { Clock } from '../../lib/clock.js'
import { decryptOrNull as decrypt, type Cipher } from '../../lib/crypto.js'
import type { EmailService } from '../mailer/mailer.service.js'
import type { TenantsService } from '../tenants/tenants.service.js'
import { emailAddedMail, mailLanguage, notificationMail } from './escalations.fns.js'
import type { EscalationsRepo, TicketView } from './escalations.repo.js'
import type { NotifyKind } from './handoff.js'

/** How long a new ticket's notice waits for the address a visitor who asked for a person is about to leave. */
export const NOTICE_EMAIL_WAIT_MS = 15_000

/**
 * The job `escalations.notify`: the support address learns of a new ticket, or of the e-mail a visitor left, once
 * per ticket and kind (claimed in the mail's transaction). One hand-off makes one notice (issue 52, item 5): a
 * notice that names the visitor's address stands for the 'email_added' one, and a widget visitor who asked for a person
 * without an address yet is waited for NOTICE_EMAIL_WAIT_MS (the widget's offline form sends it just after). The
 * notice's Reply-To is the ticket's own reply address when its bot answers mail, so a member's reply threads in.
 */
export function createNoticeSender(deps: {
  db: Db
  clock: Clock
  cipher: Cipher
  repo: EscalationsRepo
  email: Pick<EmailService, 'queue'>
  queue: Pick<JobQueue, 'enqueue'>
  tenants: Pick<TenantsService, 'notificationAddress'>
  dashboardLink: (ticketId: string) => string | null
  ticketReplyTo?: (tenantId: string, botId: string | null, ticketId: string) => Promise<string | null>
  identityOf: (t: TicketView) => { name: string | null; plan: string | null } | null
}) {
  const { db, clock, cipher, repo, email, queue, tenants, dashboardLink, identityOf } = deps
  const decryptOrNull = (enc: string | null | undefined) => decrypt(cipher, enc)
  return async function sendNotification(p: { tenantId: string; ticketId: string; kind: NotifyKind }) {
    const t = await repo.find(p.tenantId, p.ticketId)
    if (!t) return
    const to = await tenants.notificationAddress(p.tenantId)
    if (!to) return
    const visitorEmail = decryptOrNull(t.user_email_enc) ?? decryptOrNull(t.session_email_enc)
    if (p.kind === 'email_added' && !visitorEmail) return
    // one notice for one hand-off (issue 52, item 5): a visitor who asked for a person without an address yet (the
    // widget's offline form sends it a moment after the hand-off) is waited for a little, so the notice carries it
    const age = clock.now().getTime() - t.created_at.getTime()
    if (p.kind === 'opened' && !visitorEmail && t.trigger === 'user_request' && t.session_channel === 'widget' && age < NOTICE_EMAIL_WAIT_MS) {
      await queue.enqueue('escalations.notify', p, {
        tenantId: p.tenantId,
        dedupeKey: `ticket-notify:opened-later:${t.id}`,
        runAt: new Date(t.created_at.getTime() + NOTICE_EMAIL_WAIT_MS),
        maxAttempts: 8,
      })
      return
    }
    // the address came before the ticket's notice went out: that notice carries it, no second one
    if (p.kind === 'email_added' && !(await repo.notificationSent(p.tenantId, t.id, 'opened'))) return
    // Reply-To: the ticket's own address (a member's reply threads into the ticket); without one, the visitor's
    const replyTo = (await deps.ticketReplyTo?.(p.tenantId, t.bot_id, t.id)) ?? visitorEmail
    const language = mailLanguage((await repo.tenantPrivacy(p.tenantId))?.escalation_language)
    const identity = identityOf(t)
    const link = dashboardLink(t.id)
    const mail =
      p.kind === 'opened'
        ? notificationMail(
            {
              ticket_number: t.ticket_number,
              priority: t.priority,
              trigger: t.trigger,
              primary_question: t.primary_question,
              transcript: t.transcript ?? [],
              user_note: t.user_note,
              user_email: visitorEmail,
              user_name: t.user_name ?? identity?.name ?? null,
              user_id: t.user_id,
              plan: identity?.plan ?? null,
              bot_name: t.bot_name ?? null,
              evidence: Array.isArray(t.evidence) ? (t.evidence as { title?: unknown; confidence?: unknown }[]) : [],
            },
            { language, link },
          )
        : emailAddedMail(t, { language, link })
    await db.transaction().execute(async (trx) => {
      if (!(await repo.claimNotification(p.tenantId, p.ticketId, p.kind, clock.now(), trx))) return
      // a notice that names the visitor's address stands for the 'email_added' one too
      if (p.kind === 'opened' && visitorEmail) await repo.claimNotification(p.tenantId, p.ticketId, 'email_added', clock.now(), trx)
      await email.queue({ to, ...mail, ...(replyTo ? { replyTo } : {}) }, { tenantId: p.tenantId, dedupeKey: `ticket-mail:${p.kind}:${p.ticketId}` }, trx)
    })
  }
}
