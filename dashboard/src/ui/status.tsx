import { useEffect, useId, useRef, useState } from 'react'
import { api } from '../api/client'
import { useRole } from '../session'

type Status = 'online' | 'away' | 'offline'

const KEY = 'dashboard.live-status'
/** The open dashboard re-sends the status this often; the service lets an online status lapse after 3 minutes without it. */
export const HEARTBEAT_MS = 60_000

const WORDS: Record<Status, string> = { online: 'Online', away: 'Away', offline: 'Offline' }

function remembered(): Status {
  try {
    const s = localStorage.getItem(KEY)
    return s === 'away' || s === 'offline' ? s : 'online'
  } catch {
    return 'online'
  }
}

/**
 * The member's own live status in the header: online while this dashboard is open (unless they chose away or
 * offline), sent at once and then every minute as the heartbeat. Closing the tab stops the heartbeat, and the
 * service counts the member offline a few minutes later. Only for members who answer tickets.
 */
export function StatusSwitch() {
  const { may } = useRole()
  const answers = may('tickets')
  const [status, setStatus] = useState<Status>(remembered)
  const [failed, setFailed] = useState(false)
  const id = useId()
  const current = useRef(status)
  current.current = status

  useEffect(() => {
    if (!answers) return
    let stopped = false
    const beat = () => {
      api
        .PUT('/tenants/me/members/me/status', { body: { status: current.current } })
        .then((r) => !stopped && setFailed(!r.response.ok))
        .catch(() => !stopped && setFailed(true))
    }
    beat()
    // offline needs no heartbeat: it does not lapse
    const timer = status === 'offline' ? undefined : setInterval(beat, HEARTBEAT_MS)
    return () => {
      stopped = true
      clearInterval(timer)
    }
  }, [answers, status])

  if (!answers) return null
  return (
    <span className={`status-switch status-${status}`}>
      <span className="status-dot" aria-hidden="true" />
      <label htmlFor={id} className="sr-only">
        Your availability
      </label>
      <select
        id={id}
        value={status}
        aria-describedby={failed ? `${id}-err` : undefined}
        onChange={(e) => {
          const next = e.target.value as Status
          try {
            localStorage.setItem(KEY, next)
          } catch {
            // private mode: the choice lasts for this tab
          }
          setStatus(next)
        }}
      >
        {(Object.keys(WORDS) as Status[]).map((s) => (
          <option key={s} value={s}>
            {WORDS[s]}
          </option>
        ))}
      </select>
      {failed && (
        <span id={`${id}-err`} className="sr-only" role="status">
          Your status could not be saved
        </span>
      )}
    </span>
  )
}
