import { defineJob } from '../../jobs/types.js'
import type { Idempotency } from './idempotency.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    'chat.idempotency_purge': Record<string, never>
  }
}

/** Expired Idempotency-Key records of the database store are dropped hourly (Redis expires its own). */
export const chatJobs = (deps: { idempotency: Pick<Idempotency, 'purgeExpired'> }) => [
  defineJob({
    kind: 'chat.idempotency_purge',
    everySeconds: 3600,
    async handler() {
      await deps.idempotency.purgeExpired()
    },
  }),
]
