import type { Cipher } from '../../lib/crypto.js'
import type { JobQueue } from '../../jobs/queue.js'
import { sealMail } from './email.jobs.js'
import type { MailMessage } from './mailer.js'

type Executor = Parameters<JobQueue['enqueue']>[3]

/** Queues mail; delivery happens in the worker with retries, never inside a request or a transaction. */
export function createEmailService(deps: { queue: JobQueue; cipher: Cipher }) {
  return {
    queue(message: MailMessage, opts: { tenantId?: string | null; runAt?: Date; dedupeKey?: string } = {}, trx?: Executor) {
      return deps.queue.enqueue('email.send', sealMail(deps.cipher, message), { ...opts, maxAttempts: 8 }, trx)
    },
  }
}

export type EmailService = ReturnType<typeof createEmailService>
