import type { Static } from '@sinclair/typebox'
import type { Db } from '../../db/client.js'
import { memberOf } from '../../http/auth.js'
import type { Clock } from '../../lib/clock.js'
import { notFound, ValidationError } from '../../lib/errors.js'
import type { AvailabilityRepo, LiveStatus, Told } from './availability.repo.js'
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
  /**
   * Writes `availability` events to sessions' widget streams, in one transaction in which `choose` decides which
   * sessions (and with what) from rows it has locked.
   */
  tellSessions: (tenantId: string, choose: (trx: Db) => Promise<SessionEvent[]>) => Promise<number>
}

export interface SessionEvent {
  sessionId: string
  botId: string
  data: Record<string, unknown>
}

/** At most this many waiting visitors are told of one change (the longest waiting first are offered first anyway). */
const TELL_LIMIT = 1000

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

  /** The office hours, the usual first-reply time and the time, read once for every bot of a workspace. */
  async function moment(tenantId: string) {
    const now = clock.now()
    const hours = await repo.officeHours(tenantId)
    const eta = await repo.medianFirstReplySeconds(tenantId, new Date(now.getTime() - ETA_WINDOW_MS))
    return { now, hours, eta }
  }

  async function availabilityOf(tenantId: string, botId: string, at: Awaited<ReturnType<typeof moment>>): Promise<Told> {
    const inHours = isOpenAt(at.hours, at.now)
    const online = inHours && (await repo.candidates(tenantId, botId, onlineSince())).length > 0
    return { online, nextOpenAt: inHours ? null : nextOpening(at.hours, at.now) }
  }

  const present = (t: Told, eta: number | null) => ({
    online: t.online,
    reply_eta_s: eta,
    next_open_at: t.nextOpenAt ? t.nextOpenAt.toISOString() : null,
  })

  /**
   * Sends an `availability` frame to the visitors waiting for a person whose bot's availability changed since
   * they were last told (someone came online or left, the office closed or opened). `tellNew`: a bot never
   * recorded counts as changed (a member's status or the hours did change); the sweep records it silently.
   */
  async function tellQueued(tenantId: string, tellNew: boolean): Promise<number> {
    const waiting = await repo.queued(tenantId, TELL_LIMIT)
    if (waiting.length === 0) return 0
    const at = await moment(tenantId)
    const told = await repo.told(tenantId)
    const now = new Map<string, Told>()
    for (const botId of new Set(waiting.map((w) => w.bot_id))) now.set(botId, await availabilityOf(tenantId, botId, at))
    const differs = [...now].some(([botId, t]) => {
      const before = told.get(botId)
      return before ? before.online !== t.online || before.nextOpenAt?.getTime() !== t.nextOpenAt?.getTime() : true
    })
    if (!differs) return 0
    return deps.tellSessions(tenantId, async (trx) => {
      const changed = await repo.retell(
        tenantId,
        [...now].map(([botId, t]) => ({ botId, ...t })),
        at.now,
        tellNew,
        trx,
      )
      if (changed.size === 0) return []
      const sessions = await repo.lockQueued(tenantId, [...changed], TELL_LIMIT, trx)
      return sessions.map((x) => ({ sessionId: x.id, botId: x.bot_id, data: present(now.get(x.bot_id)!, at.eta) }))
    })
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
      await tellQueued(tenantId, true)
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
        await tellQueued(tenantId, true)
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
      const at = await moment(tenantId)
      return present(await availabilityOf(tenantId, botId, at), at.eta)
    },

    tellQueued,
  }
}

export type AvailabilityService = ReturnType<typeof createAvailabilityService>
