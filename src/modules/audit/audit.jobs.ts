import { defineJob } from '../../jobs/types.js'
import type { AuditService } from './audit.service.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    'audit.retention': Record<string, never>
  }
}

/** Once a day: audit entries older than each tenant's retention are deleted (safe to run twice). */
export const auditJobs = (deps: { audit: Pick<AuditService, 'sweep'> }) => [
  defineJob({
    kind: 'audit.retention',
    everySeconds: 86_400,
    maxAttempts: 3,
    async handler() {
      await deps.audit.sweep()
    },
  }),
]
