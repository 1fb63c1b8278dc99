import { defineJob } from '../../jobs/types.js'
import type { AttachmentsService } from './attachments.service.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    'attachments.retention': Record<string, never>
  }
}

/** Once a day: files past ATTACHMENT_RETENTION_DAYS, and files no message took within a day, are deleted (safe to run twice). */
export const attachmentsJobs = (deps: { attachments: Pick<AttachmentsService, 'deleteExpired'>; retentionDays: number }) => [
  defineJob({
    kind: 'attachments.retention',
    everySeconds: 86_400,
    maxAttempts: 3,
    async handler() {
      await deps.attachments.deleteExpired(deps.retentionDays)
    },
  }),
]
