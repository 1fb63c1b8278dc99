import { useSyncExternalStore } from 'react'

/** What the member opted into on this browser (#39): a beep, a browser notification. Off until they switch it on. */
export interface AlertPrefs {
  sound: boolean
  notify: boolean
}

const KEY = 'dashboard.alerts'
const OFF: AlertPrefs = { sound: false, notify: false }
const listeners = new Set<() => void>()
let cached: { raw: string | null; prefs: AlertPrefs } | null = null

function read(): AlertPrefs {
  let raw: string | null = null
  try {
    raw = localStorage.getItem(KEY)
  } catch {
    // private mode: off
  }
  if (cached && cached.raw === raw) return cached.prefs
  let prefs = OFF
  try {
    const v = raw ? (JSON.parse(raw) as Partial<AlertPrefs>) : {}
    prefs = { sound: v.sound === true, notify: v.notify === true }
  } catch {
    // a value of an older dashboard: off
  }
  cached = { raw, prefs }
  return prefs
}

export function setAlertPrefs(next: AlertPrefs): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(next))
  } catch {
    // private mode: the choice lasts for this page
    cached = { raw: null, prefs: next }
  }
  for (const l of listeners) l()
}

function subscribe(l: () => void) {
  listeners.add(l)
  // another tab's choice
  const onStorage = (e: StorageEvent) => e.key === KEY && l()
  window.addEventListener('storage', onStorage)
  return () => {
    listeners.delete(l)
    window.removeEventListener('storage', onStorage)
  }
}

export const useAlertPrefs = (): AlertPrefs => useSyncExternalStore(subscribe, read, () => OFF)

let audio: AudioContext | null = null

/**
 * Made inside the click that switches the sound on: browsers start an AudioContext only from a user's gesture,
 * and a started one stays usable for the page's life.
 */
export function unlockSound(): void {
  try {
    audio ??= new AudioContext()
    void audio.resume()
  } catch {
    audio = null
  }
}

/** A short two-tone beep made with WebAudio (no audio file to load). Silent when the page never got a gesture. */
export function beep(): void {
  try {
    audio ??= new AudioContext()
    if (audio.state === 'suspended') void audio.resume()
    const at = audio.currentTime
    for (const [i, hz] of [880, 1320].entries()) {
      const osc = audio.createOscillator()
      const gain = audio.createGain()
      osc.type = 'sine'
      osc.frequency.value = hz
      const start = at + i * 0.16
      gain.gain.setValueAtTime(0.0001, start)
      gain.gain.exponentialRampToValueAtTime(0.2, start + 0.02)
      gain.gain.exponentialRampToValueAtTime(0.0001, start + 0.14)
      osc.connect(gain).connect(audio.destination)
      osc.start(start)
      osc.stop(start + 0.15)
    }
  } catch {
    // no WebAudio here: the title count still says it
  }
}

export const notificationsSupported = () => typeof window !== 'undefined' && 'Notification' in window

/** A browser notification, only when granted; clicking it brings the dashboard to the ticket. */
export function notify(title: string, body: string, tag: string, onClick: () => void): void {
  if (!notificationsSupported() || Notification.permission !== 'granted') return
  try {
    const n = new Notification(title, { body, tag })
    n.onclick = () => {
      window.focus()
      onClick()
      n.close()
    }
  } catch {
    // some browsers allow notifications only from a service worker: the sound and the title count remain
  }
}
