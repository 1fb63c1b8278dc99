import { defineJob } from '../../jobs/types.js'
import type { AvailabilityService } from './availability.service.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** After a person's conversation ends (resolved, back to the bot, closed): the queue is offered again. */
    'live.assign_queued': { tenantId: string }
    /** Every minute: visitors waiting for a person are told when the team came online or left, or the office opened or closed. */
    'live.availability': Record<string, never>
    /** Every minute: visitors who left a waiting conversation are marked gone; long gone, without an e-mail, closed (#39). */
    'live.visitor_gone': Record<string, never>
    /** Daily: live events older than LIVE_EVENTS_RETENTION_DAYS are deleted. */
    'live.retention': Record<string, never>
  }
}

/** Idempotent: offering the queue again assigns only what is still queued, within each agent's capacity. */
export const liveJobs = (deps: {
  availability: Pick<AvailabilityService, 'assignQueued' | 'tellQueued'>
  queuedTenants: () => Promise<string[]>
  sweepEvents: () => Promise<number>
  sweepGone: () => Promise<unknown>
}) => [
  defineJob({
    kind: 'live.assign_queued',
    maxAttempts: 3,
    handler: async (payload) => {
      await deps.availability.assignQueued(payload.tenantId)
    },
  }),
  /**
   * Catches what no request changes: office hours opening or closing, an online status lapsing (its dashboard
   * closed). Safe to run twice: a bot's waiting visitors are told only what differs from what they were told.
   */
  defineJob({
    kind: 'live.availability',
    everySeconds: 60,
    maxAttempts: 1,
    handler: async () => {
      for (const tenantId of await deps.queuedTenants()) await deps.availability.tellQueued(tenantId, false)
    },
  }),
  /** Safe to run twice: it marks by time since the visitor was last seen, and closes only what is still open. */
  defineJob({
    kind: 'live.visitor_gone',
    everySeconds: 60,
    maxAttempts: 1,
    handler: async () => {
      await deps.sweepGone()
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
