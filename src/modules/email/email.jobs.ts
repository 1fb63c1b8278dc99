import type { Cipher } from '../../lib/crypto.js'
import { defineJob } from '../../jobs/types.js'
import type { MailMessage, Mailer } from './mailer.js'

/** Mail bodies carry one-time links, so the queued payload is encrypted at rest. */
export interface EmailJob {
  enc: string
}

declare module '../../jobs/types.js' {
  interface JobPayloads {
    'email.send': EmailJob
  }
}

export const sealMail = (cipher: Cipher, message: MailMessage): EmailJob => ({ enc: cipher.encrypt(JSON.stringify(message)) })

export const emailJobs = (deps: { cipher: Cipher; mailer: Mailer }) => [
  defineJob({
    kind: 'email.send',
    maxAttempts: 8,
    async handler(payload) {
      const message = JSON.parse(deps.cipher.decrypt(payload.enc)) as MailMessage
      await deps.mailer.send(message)
    },
  }),
]
