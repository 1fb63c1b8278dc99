import { defineJob } from '../../jobs/types.js'
import type { EscalationsService } from './escalations.service.js'
import type { NotifyKind } from './handoff.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** Ids only: the mail is built from the database when the job runs. */
    'escalations.notify': { tenantId: string; ticketId: string; kind: NotifyKind }
    /** Scheduled at the end of the grace period of one operator reply. */
    'escalations.reply_mail': { tenantId: string; replyId: string }
  }
}

/** Both handlers are idempotent: a marker row decides, in the transaction that queues the mail. */
export const escalationsJobs = (deps: { escalations: Pick<EscalationsService, 'sendNotification' | 'decideReplyMail'> }) => [
  defineJob({
    kind: 'escalations.notify',
    maxAttempts: 8,
    handler: (payload) => deps.escalations.sendNotification(payload),
  }),
  defineJob({
    kind: 'escalations.reply_mail',
    maxAttempts: 8,
    handler: (payload) => deps.escalations.decideReplyMail(payload),
  }),
]
