import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useState } from 'react'
import { useLocation } from 'wouter'
import { api, call } from '../api/client'
import { useRole } from '../session'
import { beep, notificationsSupported, notify, setAlertPrefs, unlockSound, useAlertPrefs } from './alerts'
import { Check } from './kit'
import { useTeamEvents } from './team-events'

/** The count refreshes itself this often besides the team's stream (a stream that dropped misses nothing for long). */
const POLL_MS = 10_000
export const NEEDS_COUNT_KEY = ['tickets', 'needs-count'] as const

/**
 * The tickets that need a person in the caller's scope: the inbox's default view ("Needs a person": open, or in
 * progress with nobody on it), counted by the service. The tab title and the inbox's badge read this one count,
 * so they never disagree with each other or with the view.
 */
export function useNeedsPersonCount(enabled = true) {
  return useQuery({
    queryKey: NEEDS_COUNT_KEY,
    queryFn: async () => {
      const r = await call(api.GET('/escalations', { params: { query: { needs_person: true, include_original: false, limit: 1, offset: 0 } } }))
      const left = r.visitor_gone_total ?? 0
      // one count (#52): `waiting` (still here) is the title's "(N) waiting" and the Queue button's; `total` the badge's, naming `left`
      return { total: r.total, left, waiting: r.total - left }
    },
    refetchInterval: POLL_MS,
    enabled,
  })
}

/** "4 tickets need a person, 3 of them left": the badge's words, the difference from the waiting count named. */
export function needsWords(c: { total: number; left: number }): string {
  const head = `${c.total === 1 ? 'ticket needs' : 'tickets need'} a person`
  return c.left > 0 ? `${head}, ${c.left} of them left` : head
}

const TITLE_PREFIX = /^\(\d+\) waiting · /

/** "(N) waiting · " before the tab's title while N conversations wait for a person; the plain title at 0. */
function useTitleCount(n: number | undefined) {
  useEffect(() => {
    const base = document.title.replace(TITLE_PREFIX, '')
    document.title = n ? `(${n}) waiting · ${base}` : base
  }, [n])
  useEffect(() => () => void (document.title = document.title.replace(TITLE_PREFIX, '')), [])
}

/** The conversations the member has (assigned to them, not resolved): a visitor writing in one of them is news for them. */
function useMine(enabled: boolean) {
  return useQuery({
    queryKey: ['tickets', 'mine-alerts'],
    queryFn: async () =>
      (await call(api.GET('/escalations', { params: { query: { assignee: 'me', status: 'in_progress', include_original: false, limit: 200, offset: 0 } } })))
        .tickets,
    enabled,
    refetchInterval: 60_000,
  })
}

/**
 * The shell's inbox alerts (#39), on every dashboard page of a member who answers tickets: the waiting count in
 * the tab title, and, when opted in on this browser, a beep and a browser notification when a conversation
 * enters the queue or a visitor writes in a conversation the member has. Renders nothing.
 */
export function InboxAlerts() {
  const { may } = useRole()
  const answers = may('tickets')
  const prefs = useAlertPrefs()
  const alerting = answers && (prefs.sound || prefs.notify)
  const count = useNeedsPersonCount(answers)
  const mine = useMine(alerting)
  const qc = useQueryClient()
  const [, navigate] = useLocation()
  useTitleCount(answers ? count.data?.waiting : undefined)

  const mineRef = useRef(mine)
  mineRef.current = mine
  /** The member's ticket of a session: from the list held, read again when it may be behind (a take just now). */
  const mineOf = async (sessionId: string) => {
    const find = (list: typeof mine.data) => list?.find((x) => x.session_id === sessionId && x.owner === 'human')
    const q = mineRef.current
    const hit = find(q.data)
    if (hit || (!q.isFetching && Date.now() - q.dataUpdatedAt < 2000)) return hit
    return find((await q.refetch()).data)
  }
  useTeamEvents((e) => {
    if (e.type !== 'message' && e.type !== 'owner') return
    void qc.invalidateQueries({ queryKey: NEEDS_COUNT_KEY })
    if (e.type === 'owner') void qc.invalidateQueries({ queryKey: ['tickets', 'mine-alerts'] })
    if (!alerting) return
    const alert = (title: string, body: string, href: string) => {
      if (prefs.sound) beep()
      // the page in front of the member shows it already; the notification is for a hidden tab
      if (prefs.notify && (document.visibilityState !== 'visible' || !document.hasFocus())) notify(title, body, e.session_id, () => navigate(href))
    }
    if (e.type === 'owner' && e.owner === 'queue') alert('A visitor is waiting', 'A conversation was handed to your team.', '/tickets')
    if (e.type === 'message' && e.role === 'user' && !e.internal && !e.from_operator) {
      const words = (e.content ?? '').slice(0, 140)
      void mineOf(e.session_id).then((t) => t && alert(`${t.ticket_number}: the visitor wrote`, words, `/tickets/${t.id}`))
    }
  }, answers)
  return null
}

/** The member's opt-in on this browser: a beep, a browser notification (permission asked on this click only). */
export function AlertPrefsForm() {
  const prefs = useAlertPrefs()
  const [refused, setRefused] = useState(() => notificationsSupported() && Notification.permission === 'denied')
  return (
    <fieldset className="notify-pref">
      <legend>Alerts on this browser</legend>
      <Check
        label="Play a sound"
        hint="A short beep when a conversation starts waiting for a person, or a visitor writes in one of yours."
        checked={prefs.sound}
        onChange={(on) => {
          if (on) {
            unlockSound()
            beep()
          }
          setAlertPrefs({ ...prefs, sound: on })
        }}
      />
      {notificationsSupported() && (
        <Check
          label="Show a browser notification"
          hint="For the same moments, while this tab is in the background."
          checked={prefs.notify && !refused}
          onChange={async (on) => {
            if (on && Notification.permission === 'default') {
              const answer = await Notification.requestPermission().catch(() => 'denied' as const)
              setRefused(answer !== 'granted')
              if (answer !== 'granted') return
            }
            if (on && Notification.permission === 'denied') return setRefused(true)
            setAlertPrefs({ ...prefs, notify: on })
          }}
        />
      )}
      {refused && (
        <p className="hint" role="status">
          This browser blocks notifications for the dashboard: allow them in the site's settings, then switch this on again.
        </p>
      )}
    </fieldset>
  )
}
