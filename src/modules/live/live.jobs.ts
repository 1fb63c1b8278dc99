import { defineJob } from '../../jobs/types.js'
import type { AvailabilityService } from './availability.service.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** After a person's conversation ends (resolved, back to the bot, closed): the queue is offered again. */
    'live.assign_queued': { tenantId: string }
  }
}

/** Idempotent: offering the queue again assigns only what is still queued, within each agent's capacity. */
export const liveJobs = (deps: { availability: Pick<AvailabilityService, 'assignQueued'> }) => [
  defineJob({
    kind: 'live.assign_queued',
    maxAttempts: 3,
    handler: async (payload) => {
      await deps.availability.assignQueued(payload.tenantId)
    },
  }),
]
