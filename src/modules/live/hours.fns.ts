import type { OfficeHoursValue } from '../../db/schema/foundation.js'

export type OfficeHours = OfficeHoursValue

const HM = /^([01]\d|2[0-3]):[0-5]\d$/
const END_HM = /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/
const DATE = /^\d{4}-\d{2}-\d{2}$/

/** An IANA zone name the runtime knows ("Europe/Berlin", "UTC"); offsets and abbreviations are refused. */
export function isTimeZone(tz: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(tz)) return false
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz })
    return true
  } catch {
    return false
  }
}

const minutes = (hm: string) => Number(hm.slice(0, 2)) * 60 + Number(hm.slice(3, 5))

function isDate(s: string): boolean {
  if (!DATE.test(s)) return false
  const d = new Date(`${s}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s
}

/** The first problem of a week's hours as [location, message], or null: what a 422 names. */
export function hoursProblem(h: OfficeHours): [(string | number)[], string] | null {
  if (!isTimeZone(h.timezone)) return [['body', 'timezone'], `Unknown time zone: ${h.timezone}`]
  for (const [i, w] of h.weekly.entries()) {
    if (!Number.isInteger(w.day) || w.day < 0 || w.day > 6) return [['body', 'weekly', i, 'day'], 'day must be 0 (Sunday) to 6 (Saturday)']
    if (!HM.test(w.start)) return [['body', 'weekly', i, 'start'], 'start must be HH:MM (00:00 to 23:59)']
    if (!END_HM.test(w.end)) return [['body', 'weekly', i, 'end'], 'end must be HH:MM (00:01 to 24:00)']
    if (minutes(w.start) >= minutes(w.end)) return [['body', 'weekly', i, 'end'], 'end must be after start']
  }
  for (const [i, d] of h.holidays.entries()) if (!isDate(d)) return [['body', 'holidays', i], 'holidays must be dates as YYYY-MM-DD']
  return null
}

interface Local {
  date: string
  weekday: number
  minute: number
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']
const formats = new Map<string, Intl.DateTimeFormat>()

/** The wall clock in `tz` at an instant: its date, weekday (0 = Sunday) and minute of the day. */
export function localTime(at: Date, tz: string): Local {
  let f = formats.get(tz)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      weekday: 'short',
    })
    formats.set(tz, f)
  }
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]))
  return { date: `${p.year}-${p.month}-${p.day}`, weekday: WEEKDAYS.indexOf(p.weekday!), minute: Number(p.hour) * 60 + Number(p.minute) }
}

/** Offset of `tz` from UTC at an instant, in minutes. */
function offsetMinutes(at: Date, tz: string): number {
  const l = localTime(at, tz)
  const asUtc = Date.parse(`${l.date}T00:00:00Z`) + l.minute * 60_000
  return Math.round((asUtc - Math.floor(at.getTime() / 60_000) * 60_000) / 60_000)
}

/**
 * The instant a wall-clock time of a date happens in `tz`. A time skipped by a DST jump (02:30 on a spring
 * night) is read with the offset before the jump, so it lands just after it.
 */
export function zonedInstant(date: string, minute: number, tz: string): Date {
  const naive = Date.parse(`${date}T00:00:00Z`) + minute * 60_000
  const first = naive - offsetMinutes(new Date(naive), tz) * 60_000
  const second = naive - offsetMinutes(new Date(first), tz) * 60_000
  const real = [first, second].filter((c) => {
    const l = localTime(new Date(c), tz)
    return l.date === date && l.minute === minute
  })
  // an hour that happens twice (autumn) is its first time; one that never happens (spring) is after the jump
  return new Date(real.length ? Math.min(...real) : Math.max(first, second))
}

const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10)

/** No weekly hours: open all day, every day but the holidays. */
const ALL_DAY = [0, 1, 2, 3, 4, 5, 6].map((day) => ({ day, start: '00:00', end: '24:00' }))
const weeklyOf = (h: OfficeHours) => (h.weekly.length ? h.weekly : ALL_DAY)

/** Whether the team is within its office hours at an instant; no hours set (or no weekly hours): always but on holidays. */
export function isOpenAt(h: OfficeHours | null | undefined, at: Date): boolean {
  if (!h) return true
  const l = localTime(at, h.timezone)
  if (h.holidays.includes(l.date)) return false
  return weeklyOf(h).some((w) => w.day === l.weekday && minutes(w.start) <= l.minute && l.minute < minutes(w.end))
}

/** The next instant the hours open after `at` (null when open now, when always open, or never within a year). */
export function nextOpening(h: OfficeHours | null | undefined, at: Date): Date | null {
  if (!h || isOpenAt(h, at)) return null
  const today = localTime(at, h.timezone).date
  for (let i = 0; i <= 370; i++) {
    const date = addDays(today, i)
    if (h.holidays.includes(date)) continue
    const weekday = new Date(`${date}T00:00:00Z`).getUTCDay()
    const starts = weeklyOf(h)
      .filter((w) => w.day === weekday)
      .map((w) => zonedInstant(date, minutes(w.start), h.timezone))
      .filter((d) => d.getTime() > at.getTime())
      .sort((a, b) => a.getTime() - b.getTime())
    if (starts[0]) return starts[0]
  }
  return null
}

/** The median of some numbers (null for none). */
export function median(xs: number[]): number | null {
  if (!xs.length) return null
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
