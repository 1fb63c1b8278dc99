import type { Cipher } from '../../lib/crypto.js'
import { defineJob } from '../../jobs/types.js'
import type { MailFile, MailMessage, Mailer } from './mailer.transport.js'

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

export const emailJobs = (deps: {
  cipher: Cipher
  mailer: Mailer
  /** the files of a mail's `files` (the attachments module), read when it is sent; absent: none are attached */
  files?: (tenantId: string, messageIds: string[]) => Promise<MailFile[]>
}) => [
  defineJob({
    kind: 'email.send',
    maxAttempts: 8,
    async handler(payload) {
      const message = JSON.parse(deps.cipher.decrypt(payload.enc)) as MailMessage
      // a file deleted since (its conversation, retention) is simply not attached
      const files = message.files && deps.files ? await deps.files(message.files.tenantId, message.files.messageIds) : undefined
      await deps.mailer.send(message, files)
    },
  }),
]
