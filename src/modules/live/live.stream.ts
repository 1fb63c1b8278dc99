import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { ChangeFeed } from '../../db/change-feed.js'
import { openSse, type SseStream } from '../../http/sse.js'
import { inScope, type BotScope } from '../shared/bot-scope.js'
import { AppError } from '../../lib/errors.js'
import { parseSeq, teamPayload, TYPING_LAPSE_MS, widgetPayload } from './live.fns.js'
import type { LiveRepo } from './live.repo.js'
import type { Presence } from './presence.js'
import { LIVE_TOPIC } from './live.service.js'

/** Events read per query; a stream far behind reads page after page. */
const PAGE = 200

export interface StreamFrame {
  id: string
  payload: unknown
  /** The event's bot (null: the workspace's): a team member limited to some bots gets only theirs. */
  botId?: string | null
  /** For the visitor only (what a waiting visitor is told of availability; the team has the workspace's event). */
  widgetOnly?: boolean
  /** A passing state (typing): when it happened (ms). Shown to streams open then, never replayed to a later one. */
  transientAt?: number
}

/** One open stream: where it is, and which frames of its group it shows. */
interface Member {
  sse: SseStream
  cursor: string
  /** when the stream opened (ms): transient frames from before are not replayed to it */
  since: number
  accept(f: StreamFrame): boolean
}

/**
 * The streams that read the same log: a workspace's team streams (every member's, filtered by bot scope in
 * memory), or one session's widget streams (a visitor's tabs). A wake-up makes one read for all of them, from
 * the lowest cursor, instead of one query per stream per event.
 */
interface Group {
  read(after: string): Promise<StreamFrame[]>
  members: Set<Member>
  reading: boolean
  again: boolean
}

/** Sequence numbers are bigints as text without leading zeros: compared as numbers without parsing. */
const after = (a: string, b: string) => a.length > b.length || (a.length === b.length && a > b)

/**
 * Every open event stream of this process, woken by the change feed (topic `live`, key `<tenant>/<session>`):
 * a wake-up reads the table after the group's lowest cursor, so a lost notice is made good by the next one, and
 * a feed that lost its listener (not live, or reset) wakes every stream on the shared heartbeat. One timer
 * for all streams; an idle stream holds its cursor and a few closures, no timer of its own.
 */
export function createLiveHub(deps: {
  changes: Pick<ChangeFeed, 'subscribe' | 'onReset' | 'live'>
  heartbeatMs: number
  log: Pick<Logger, 'warn'>
  /** the clock typing events are stamped with (ms) */
  now?: () => number
}) {
  const now = deps.now ?? Date.now
  const teams = new Map<string, Group>()
  const sessions = new Map<string, Group>()
  let timer: NodeJS.Timeout | null = null

  const everyGroup = function* () {
    yield* teams.values()
    yield* sessions.values()
  }
  deps.changes.subscribe(LIVE_TOPIC, (key) => {
    const [tenantId, sessionId] = key.split('/')
    const t = teams.get(tenantId!)
    if (t) wake(t)
    const s = sessionId ? sessions.get(sessionId) : undefined
    if (s) wake(s)
  })
  deps.changes.onReset(() => {
    for (const g of everyGroup()) wake(g)
  })

  function tick() {
    const catchUp = !deps.changes.live
    for (const g of everyGroup()) {
      for (const m of g.members) m.sse.comment('ping')
      if (catchUp) wake(g)
    }
  }

  function wake(g: Group) {
    if (g.reading) g.again = true
    else void run(g)
  }

  /** Reads until every member is at the end of the log; a member only gets frames of a read that started at or before its cursor. */
  async function run(g: Group) {
    g.reading = true
    try {
      do {
        g.again = false
        for (;;) {
          let from: string | null = null
          for (const m of g.members) if (!m.sse.closed && (from === null || after(from, m.cursor))) from = m.cursor
          if (from === null) break
          const frames = await g.read(from)
          for (const m of g.members) {
            if (m.sse.closed || after(from, m.cursor)) continue
            // the member's frames of this read in one write; its cursor moves past the ones it does not show too
            const mine: StreamFrame[] = []
            let last = m.cursor
            for (const f of frames) {
              if (!after(f.id, last)) continue
              if (m.accept(f) && !(f.transientAt !== undefined && f.transientAt < m.since)) mine.push(f)
              last = f.id
            }
            if (m.sse.events(mine)) m.cursor = last
          }
          if (frames.length < PAGE) {
            // a member still behind `from` joined during the read: once more for it
            if ([...g.members].some((m) => !m.sse.closed && after(from!, m.cursor))) continue
            break
          }
        }
      } while (g.again)
    } catch (err) {
      deps.log.warn({ err: { message: (err as Error).message } }, 'live stream read failed')
    } finally {
      g.reading = false
    }
  }

  function join(map: Map<string, Group>, key: string, member: Member, read: Group['read']) {
    let g = map.get(key)
    if (!g) map.set(key, (g = { read, members: new Set(), reading: false, again: false }))
    g.members.add(member)
    if (!timer) {
      timer = setInterval(tick, deps.heartbeatMs)
      timer.unref()
    }
    const group = g
    member.sse.signal.addEventListener(
      'abort',
      () => {
        group.members.delete(member)
        if (group.members.size === 0 && map.get(key) === group) map.delete(key)
        if (teams.size === 0 && sessions.size === 0 && timer) {
          clearInterval(timer)
          timer = null
        }
      },
      { once: true },
    )
    wake(g)
  }

  /**
   * Streams every frame after `after` (then each new one) until the client goes away; replays exactly once, in
   * order. `read` reads the group's log (the same for every stream of `scope`); `accept` filters it per stream.
   */
  function open(
    sse: SseStream,
    scope: { team: string } | { session: string },
    after: string,
    read: Group['read'],
    accept: (f: StreamFrame) => boolean = () => true,
  ) {
    const member: Member = { sse, cursor: after, since: now(), accept }
    if ('team' in scope) join(teams, scope.team, member, read)
    else join(sessions, scope.session, member, read)
  }

  /** Ends every stream (the app is closing: a client reconnects to another instance with Last-Event-ID). */
  function closeAll() {
    for (const g of [...everyGroup()]) for (const m of g.members) m.sse.close()
    teams.clear()
    sessions.clear()
    if (timer) clearInterval(timer)
    timer = null
  }

  const openStreams = () => {
    let n = 0
    for (const g of everyGroup()) n += g.members.size
    return n
  }
  return { open, closeAll, PAGE, openStreams }
}

export type LiveHub = ReturnType<typeof createLiveHub>

/** Open event streams at once, per visitor session and per client address; one more is a 429 until one closes. */
export const STREAMS_PER_SESSION = 5
export const STREAMS_PER_IP = 50

/** When a typing event happened: its expiry less the lapse (the event carries no other time). */
const typingAt = (e: { type: string; data: unknown }) => {
  if (e.type !== 'typing') return undefined
  const exp = Date.parse(String((e.data as { expires_at?: unknown } | null)?.expires_at ?? ''))
  return Number.isFinite(exp) ? exp - TYPING_LAPSE_MS : undefined
}

/** The two streams over HTTP: where a (re)connecting client starts, and what each frame says. */
export function createLiveStreams(deps: {
  repo: LiveRepo
  hub: LiveHub
  limits?: { perSession: number; perIp: number }
  presence?: Pick<Presence, 'streamOpened'>
}) {
  const { repo, hub } = deps
  const limits = deps.limits ?? { perSession: STREAMS_PER_SESSION, perIp: STREAMS_PER_IP }
  const open = new Map<string, number>()

  /** Takes a slot under each key (or none: a 429 naming the limit); the slots are given back when the stream closes. */
  function take(keys: [string, number][]): () => void {
    for (const [k, max] of keys) {
      if ((open.get(k) ?? 0) >= max)
        throw new AppError(
          429,
          'too_many_streams',
          `Too many open event streams (at most ${max} ${k.startsWith('s:') ? 'per conversation' : 'per address'}): close one first`,
          {
            headers: { 'retry-after': '5' },
          },
        )
    }
    for (const [k] of keys) open.set(k, (open.get(k) ?? 0) + 1)
    let given = false
    return () => {
      if (given) return
      given = true
      for (const [k] of keys) {
        const n = (open.get(k) ?? 1) - 1
        if (n <= 0) open.delete(k)
        else open.set(k, n)
      }
    }
  }

  /** Opens the SSE response holding the slots until it closes. */
  function openHeld(req: FastifyRequest, reply: FastifyReply, keys: [string, number][]) {
    const release = take(keys)
    try {
      const sse = openSse(req, reply, { heartbeatMs: 0 })
      if (sse.signal.aborted) release()
      else sse.signal.addEventListener('abort', release, { once: true })
      return sse
    } catch (err) {
      release()
      throw err
    }
  }
  /** Last-Event-ID wins over ?after=; neither: from now on (history comes from the history endpoints). */
  const startOf = (req: FastifyRequest, after: string | undefined) => parseSeq(req.headers['last-event-id']) ?? parseSeq(after)

  return {
    closeAll: hub.closeAll,

    async team(req: FastifyRequest, reply: FastifyReply, tenantId: string, scope: BotScope, after: string | undefined) {
      const start = startOf(req, after) ?? (await repo.lastTeamSeq(tenantId))
      const sse = openHeld(req, reply, [[`ip:${req.ip}`, limits.perIp]])
      // one read of the whole workspace for all its team streams on this process; each shows its member's bots
      hub.open(
        sse,
        { team: tenantId },
        start,
        async (a) =>
          (await repo.teamEvents(tenantId, a, null, hub.PAGE)).map((e) => ({
            id: e.seq,
            payload: teamPayload(e),
            botId: e.bot_id,
            widgetOnly: e.type === 'availability' && e.session_id !== null,
            transientAt: typingAt(e),
          })),
        (f) => !f.widgetOnly && (f.botId === null || f.botId === undefined || inScope(scope, f.botId)),
      )
    },

    async session(req: FastifyRequest, reply: FastifyReply, tenantId: string, sessionId: string, after: string | undefined) {
      const start = startOf(req, after) ?? (await repo.lastSessionSeq(tenantId, sessionId))
      const sse = openHeld(req, reply, [
        [`s:${tenantId}/${sessionId}`, limits.perSession],
        [`ip:${req.ip}`, limits.perIp],
      ])
      // the visitor is here while the stream is open (a gone visitor is back, presence.ts)
      await deps.presence?.streamOpened(tenantId, sessionId, sse.signal)
      hub.open(sse, { session: sessionId }, start, async (a) =>
        (await repo.sessionEvents(tenantId, sessionId, a, hub.PAGE)).map((e) => ({ id: e.session_seq!, payload: widgetPayload(e), transientAt: typingAt(e) })),
      )
    },
  }
}

export type LiveStreams = ReturnType<typeof createLiveStreams>
