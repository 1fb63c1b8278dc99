import type { Cipher } from '../../lib/crypto.js'
import type { JobQueue } from '../../jobs/queue.js'
import { sealMail } from './mailer.jobs.js'
import type { MailMessage } from './mailer.transport.js'

type Executor = Parameters<JobQueue['enqueue']>[3]

/** Queues mail; delivery happens in the worker with retries, never inside a request or a transaction. */
export function createEmailService(deps: { queue: JobQueue; cipher: Cipher }) {
  return {
    /** `sessionId`: the conversation the mail belongs to, for a wrapper that threads it (the e-mail channel). */
    queue(message: MailMessage, opts: { tenantId?: string | null; runAt?: Date; dedupeKey?: string; sessionId?: string } = {}, trx?: Executor) {
      const { sessionId: _session, ...rest } = opts
      return deps.queue.enqueue('email.send', sealMail(deps.cipher, message), { ...rest, maxAttempts: 8 }, trx)
    },
  }
}

export type EmailService = ReturnType<typeof createEmailService>
