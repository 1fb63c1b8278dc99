import { defineJob } from '../../../jobs/types.js'
import type { PrivacyService } from './privacy.service.js'

declare module '../../../jobs/types.js' {
  interface JobPayloads {
    'privacy.retention': Record<string, never>
  }
}

/** Once a day: PII audit events older than each tenant's retention are deleted (safe to run twice). */
export const privacyJobs = (deps: { privacy: Pick<PrivacyService, 'applyRetentionAll'> }) => [
  defineJob({
    kind: 'privacy.retention',
    everySeconds: 86_400,
    maxAttempts: 3,
    async handler() {
      await deps.privacy.applyRetentionAll()
    },
  }),
]
