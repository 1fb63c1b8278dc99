import { defineJob } from '../../jobs/types.js'
import { PROCESS_ATTEMPTS } from './email-channel.service.js'
import type { createEmailTurns } from './email-channel.turns.js'

declare module '../../jobs/types.js' {
  interface JobPayloads {
    /** Ids only: the raw message is read (encrypted) from its row when the job runs. */
    'email_channel.process': { tenantId: string; id: string }
  }
}

/** Idempotent: the message's status, checked under its row lock in the last transaction, decides. */
export const emailChannelJobs = (deps: { turns: ReturnType<typeof createEmailTurns> }) => [
  defineJob({
    kind: 'email_channel.process',
    maxAttempts: PROCESS_ATTEMPTS,
    backoffSeconds: (attempt) => Math.min(300, 5 * 2 ** (attempt - 1)),
    handler: (payload, ctx) => deps.turns.process(payload, ctx),
  }),
]
