import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { ChangeFeed } from '../../db/change-feed.js'
import { openSse, type SseStream } from '../../http/sse.js'
import type { BotScope } from '../shared/bot-scope.js'
import { parseSeq, teamPayload, widgetPayload } from './live.fns.js'
import type { LiveRepo } from './live.repo.js'
import { LIVE_TOPIC } from './live.service.js'

/** Events read per query; a stream far behind reads page after page. */
const PAGE = 200

export interface StreamFrame {
  id: string
  payload: unknown
}

/** One open stream: where it is, and how it reads what came after. */
interface Pump {
  sse: SseStream
  wake(): void
}

/**
 * Every open event stream of this process, woken by the change feed (topic `live`, key `<tenant>/<session>`):
 * a wake-up reads the table after the stream's last seq, so a lost notice is made good by the next one, and
 * a feed that lost its listener (not live, or reset) wakes every stream on the shared heartbeat. One timer
 * for all streams; an idle stream holds its cursor and a few closures, no timer of its own.
 */
export function createLiveHub(deps: { changes: Pick<ChangeFeed, 'subscribe' | 'onReset' | 'live'>; heartbeatMs: number; log: Pick<Logger, 'warn'> }) {
  const teams = new Map<string, Set<Pump>>()
  const sessions = new Map<string, Set<Pump>>()
  let timer: NodeJS.Timeout | null = null

  const wakeAll = (set: Set<Pump> | undefined) => {
    if (set) for (const p of set) p.wake()
  }
  const everyPump = function* () {
    for (const set of teams.values()) yield* set
    for (const set of sessions.values()) yield* set
  }
  deps.changes.subscribe(LIVE_TOPIC, (key) => {
    const [tenantId, sessionId] = key.split('/')
    wakeAll(teams.get(tenantId!))
    if (sessionId) wakeAll(sessions.get(sessionId))
  })
  deps.changes.onReset(() => {
    for (const p of everyPump()) p.wake()
  })

  function tick() {
    const catchUp = !deps.changes.live
    for (const p of everyPump()) {
      p.sse.comment('ping')
      if (catchUp) p.wake()
    }
  }

  function add(map: Map<string, Set<Pump>>, key: string, pump: Pump) {
    let set = map.get(key)
    if (!set) map.set(key, (set = new Set()))
    set.add(pump)
    if (!timer) {
      timer = setInterval(tick, deps.heartbeatMs)
      timer.unref()
    }
    pump.sse.signal.addEventListener('abort', () => remove(map, key, pump), { once: true })
  }

  function remove(map: Map<string, Set<Pump>>, key: string, pump: Pump) {
    const set = map.get(key)
    set?.delete(pump)
    if (set && set.size === 0) map.delete(key)
    if (teams.size === 0 && sessions.size === 0 && timer) {
      clearInterval(timer)
      timer = null
    }
  }

  /** Streams every frame after `after` (then each new one) until the client goes away; replays exactly once, in order. */
  function open(sse: SseStream, scope: { team: string } | { session: string }, after: string, read: (after: string) => Promise<StreamFrame[]>) {
    let cursor = after
    let reading = false
    let again = false
    const run = async () => {
      reading = true
      try {
        do {
          again = false
          for (;;) {
            const frames = await read(cursor)
            for (const f of frames) {
              if (!sse.event(f.id, f.payload)) return
              cursor = f.id
            }
            if (frames.length < PAGE) break
          }
        } while (again && !sse.closed)
      } catch (err) {
        deps.log.warn({ err: { message: (err as Error).message } }, 'live stream read failed')
      } finally {
        reading = false
      }
    }
    const pump: Pump = {
      sse,
      wake() {
        if (sse.closed) return
        if (reading) again = true
        else void run()
      },
    }
    if ('team' in scope) add(teams, scope.team, pump)
    else add(sessions, scope.session, pump)
    pump.wake()
  }

  /** Ends every stream (the app is closing: a client reconnects to another instance with Last-Event-ID). */
  function closeAll() {
    for (const p of [...everyPump()]) p.sse.close()
    teams.clear()
    sessions.clear()
    if (timer) clearInterval(timer)
    timer = null
  }

  return { open, closeAll, PAGE, openStreams: () => [...everyPump()].length }
}

export type LiveHub = ReturnType<typeof createLiveHub>

/** The two streams over HTTP: where a (re)connecting client starts, and what each frame says. */
export function createLiveStreams(deps: { repo: LiveRepo; hub: LiveHub }) {
  const { repo, hub } = deps
  /** Last-Event-ID wins over ?after=; neither: from now on (history comes from the history endpoints). */
  const startOf = (req: FastifyRequest, after: string | undefined) => parseSeq(req.headers['last-event-id']) ?? parseSeq(after)

  return {
    closeAll: hub.closeAll,

    async team(req: FastifyRequest, reply: FastifyReply, tenantId: string, scope: BotScope, after: string | undefined) {
      const start = startOf(req, after) ?? (await repo.lastTeamSeq(tenantId))
      const sse = openSse(req, reply, { heartbeatMs: 0 })
      hub.open(sse, { team: tenantId }, start, async (a) =>
        (await repo.teamEvents(tenantId, a, scope, hub.PAGE)).map((e) => ({ id: e.seq, payload: teamPayload(e) })),
      )
    },

    async session(req: FastifyRequest, reply: FastifyReply, tenantId: string, sessionId: string, after: string | undefined) {
      const start = startOf(req, after) ?? (await repo.lastSessionSeq(tenantId, sessionId))
      const sse = openSse(req, reply, { heartbeatMs: 0 })
      hub.open(sse, { session: sessionId }, start, async (a) =>
        (await repo.sessionEvents(tenantId, sessionId, a, hub.PAGE)).map((e) => ({ id: e.session_seq!, payload: widgetPayload(e) })),
      )
    },
  }
}

export type LiveStreams = ReturnType<typeof createLiveStreams>
