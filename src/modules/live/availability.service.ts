import type { Static } from '@sinclair/typebox'
import type { Db } from '../../db/client.js'
import { memberOf } from '../../http/auth.js'
import type { Clock } from '../../lib/clock.js'
import { notFound, ValidationError } from '../../lib/errors.js'
import type { AvailabilityRepo, LiveStatus } from './availability.repo.js'
import type { OfficeHoursBody } from './availability.schemas.js'
import { hoursProblem, isOpenAt, nextOpening } from './hours.fns.js'

const DEFAULT_HOURS = { timezone: 'UTC', weekly: [], holidays: [] }
const ETA_WINDOW_MS = 7 * 86_400_000
/**
 * An online status counts this long after it was last set: an open dashboard re-sends it every minute (its
 * heartbeat), so a closed tab or a lost network makes the member offline after a few missed beats.
 */
export const STATUS_LAPSE_MS = 3 * 60_000
/** At most this many queued conversations are offered in one sweep (each in its own transaction). */
const SWEEP_LIMIT = 100

export interface AvailabilityDeps {
  db: Db
  clock: Clock
  repo: AvailabilityRepo
  /** A workspace-wide event on the team's stream (type `availability`). */
  announce: (tenantId: string, data: Record<string, unknown>) => Promise<void>
  /** Offers a queued conversation to auto-assignment (the live service's changeOwner through pickAgent). */
  offerQueued: (tenantId: string, sessionId: string) => Promise<boolean>
}

/**
 * Whether anyone is there to answer (office hours, members' status), what the widget tells a visitor about
 * it, and auto-assignment: who gets a conversation entering the queue, and the queue when an agent comes online.
 */
export function createAvailabilityService(deps: AvailabilityDeps) {
  const { clock, repo } = deps
  const onlineSince = () => new Date(clock.now().getTime() - STATUS_LAPSE_MS)

  const presentHours = (h: Static<typeof OfficeHoursBody> | null) => h ?? DEFAULT_HOURS

  /** The online member with the fewest open conversations under the capacity, or null (auto-assignment off: null). */
  async function pickAgent(tenantId: string, botId: string | null, trx: Db): Promise<string | null> {
    const s = await repo.assignSettings(tenantId, trx)
    if (!s.autoAssign) return null
    const c = (await repo.candidates(tenantId, botId, onlineSince(), trx)).find((x) => x.open < s.capacity)
    return c?.id ?? null
  }

  /** Offers the queue, oldest first, until nobody can take more. */
  async function assignQueued(tenantId: string): Promise<number> {
    const s = await repo.assignSettings(tenantId)
    if (!s.autoAssign) return 0
    let assigned = 0
    for (const q of await repo.queued(tenantId, SWEEP_LIMIT)) {
      const free = (await repo.candidates(tenantId, null, onlineSince())).some((c) => c.open < s.capacity)
      if (!free) break
      if (await deps.offerQueued(tenantId, q.id)) assigned++
    }
    return assigned
  }

  return {
    pickAgent,
    assignQueued,

    async officeHours(tenantId: string) {
      return presentHours(await repo.officeHours(tenantId))
    },

    async setOfficeHours(tenantId: string, body: Static<typeof OfficeHoursBody>) {
      const hours = { timezone: body.timezone, weekly: body.weekly, holidays: [...new Set(body.holidays)].sort() }
      const problem = hoursProblem(hours)
      if (problem) throw new ValidationError(problem[0], problem[1])
      await repo.setOfficeHours(tenantId, hours, clock.now())
      await deps.announce(tenantId, { reason: 'office_hours' })
      return hours
    },

    /** Last status wins (the dashboard's heartbeat sets online); coming online takes queued conversations. */
    async setStatus(tenantId: string, userId: string, status: LiveStatus) {
      const before = await repo.statusOf(tenantId, userId)
      const m = await repo.setStatus(tenantId, userId, status, clock.now())
      if (!m) throw notFound('Member not found')
      // a heartbeat of a member still online changes nothing the team or the widget would see
      const lapsed = !before?.live_status_at || before.live_status_at < onlineSince()
      if (before?.live_status !== status || (status === 'online' && lapsed)) {
        await deps.announce(tenantId, { reason: 'member_status', user_id: userId, status })
        if (status === 'online') await assignQueued(tenantId)
      }
      const member = memberOf(m)
      return {
        user_id: m.id,
        email: m.email,
        role: member.role,
        bot_ids: member.botIds,
        can_view_original: member.canViewOriginal,
        last_active_at: m.last_active_at ? m.last_active_at.toISOString() : null,
        created_at: m.created_at.toISOString(),
        status: m.live_status,
      }
    },

    /** What the widget shows: someone online within the hours, the usual wait, and when the team is back. */
    async availability(tenantId: string, botId: string) {
      const now = clock.now()
      const hours = await repo.officeHours(tenantId)
      const inHours = isOpenAt(hours, now)
      const online = inHours && (await repo.candidates(tenantId, botId, onlineSince())).length > 0
      const next = inHours ? null : nextOpening(hours, now)
      return {
        online,
        reply_eta_s: await repo.medianFirstReplySeconds(tenantId, new Date(now.getTime() - ETA_WINDOW_MS)),
        next_open_at: next ? next.toISOString() : null,
      }
    },
  }
}

export type AvailabilityService = ReturnType<typeof createAvailabilityService>
