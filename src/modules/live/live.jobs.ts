import { defineJob } from '../../jobs/types.js'
import type { AvailabilityService } from './availability.service.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** After a person's conversation ends (resolved, back to the bot, closed): the queue is offered again. */
    'live.assign_queued': { tenantId: string }
    /** Daily: live events older than LIVE_EVENTS_RETENTION_DAYS are deleted. */
    'live.retention': Record<string, never>
  }
}

/** Idempotent: offering the queue again assigns only what is still queued, within each agent's capacity. */
export const liveJobs = (deps: { availability: Pick<AvailabilityService, 'assignQueued'>; sweepEvents: () => Promise<number> }) => [
  defineJob({
    kind: 'live.assign_queued',
    maxAttempts: 3,
    handler: async (payload) => {
      await deps.availability.assignQueued(payload.tenantId)
    },
  }),
  /** Safe to run twice: it deletes by age only. */
  defineJob({
    kind: 'live.retention',
    everySeconds: 86_400,
    maxAttempts: 3,
    handler: async () => {
      await deps.sweepEvents()
    },
  }),
]
