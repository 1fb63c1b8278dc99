/**
 * Payload type of every job kind. Modules add their kinds by declaration merging:
 *
 *   declare module '../../jobs/types.js' { interface JobPayloads { 'email.send': EmailJob } }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface JobPayloads {}

export type JobKind = keyof JobPayloads & string

export interface JobContext {
  jobId: string
  attempt: number
  /** Aborted when the worker is stopping; long handlers should check it between steps. */
  signal: AbortSignal
}

export interface JobDefinition<K extends JobKind = JobKind> {
  kind: K
  handler: (payload: JobPayloads[K], ctx: JobContext) => Promise<void>
  maxAttempts?: number
  /** Seconds before retry number `attempt` (1-based). Default: exponential from 5 s, capped at 1 h. */
  backoffSeconds?: (attempt: number) => number
  /**
   * Recurring jobs: the worker keeps exactly one pending instance, scheduled `everySeconds` after the
   * previous run. The payload of a recurring job is `{}`.
   */
  everySeconds?: number
}

export const defineJob = <K extends JobKind>(def: JobDefinition<K>): JobDefinition<K> => def
