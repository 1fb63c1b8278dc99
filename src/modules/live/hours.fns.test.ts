import { describe, expect, it } from 'vitest'
import { hoursProblem, isOpenAt, isTimeZone, median, nextOpening, zonedInstant, type OfficeHours } from './hours.fns.js'

const weekdays = (start: string, end: string) => [1, 2, 3, 4, 5].map((day) => ({ day, start, end }))
const berlin: OfficeHours = { timezone: 'Europe/Berlin', weekly: weekdays('09:00', '17:30'), holidays: ['2026-12-25'] }

describe('office hours', () => {
  it('is open inside a day interval in the zone, closed outside it and on a holiday', () => {
    // Tuesday 2026-11-24, 08:30 UTC = 09:30 Berlin (CET, UTC+1)
    expect(isOpenAt(berlin, new Date('2026-11-24T08:30:00Z'))).toBe(true)
    expect(isOpenAt(berlin, new Date('2026-11-24T07:59:00Z'))).toBe(false)
    expect(isOpenAt(berlin, new Date('2026-11-24T16:30:00Z'))).toBe(false) // 17:30 local: the end is exclusive
    expect(isOpenAt(berlin, new Date('2026-11-24T16:29:00Z'))).toBe(true)
    // Friday 2026-12-25 10:00 local: a holiday
    expect(isOpenAt(berlin, new Date('2026-12-25T09:00:00Z'))).toBe(false)
    // Sunday
    expect(isOpenAt(berlin, new Date('2026-11-29T10:00:00Z'))).toBe(false)
    expect(isOpenAt(null, new Date())).toBe(true)
  })

  it('the next opening skips the weekend and holidays', () => {
    // Friday 2026-11-27 18:00 local -> Monday 09:00 local (08:00 UTC)
    expect(nextOpening(berlin, new Date('2026-11-27T17:00:00Z'))?.toISOString()).toBe('2026-11-30T08:00:00.000Z')
    // Thursday 2026-12-24 evening -> Friday is a holiday -> Monday 28th
    expect(nextOpening(berlin, new Date('2026-12-24T18:00:00Z'))?.toISOString()).toBe('2026-12-28T08:00:00.000Z')
    // early the same day
    expect(nextOpening(berlin, new Date('2026-11-24T05:00:00Z'))?.toISOString()).toBe('2026-11-24T08:00:00.000Z')
    expect(nextOpening(berlin, new Date('2026-11-24T08:30:00Z'))).toBeNull()
    // no weekly hours: always open, but for the holidays
    const always = { timezone: 'UTC', weekly: [], holidays: ['2026-12-25'] }
    expect(nextOpening(always, new Date())).toBeNull()
    expect(isOpenAt(always, new Date('2026-12-25T12:00:00Z'))).toBe(false)
    expect(nextOpening(always, new Date('2026-12-25T12:00:00Z'))?.toISOString()).toBe('2026-12-26T00:00:00.000Z')
  })

  it('follows daylight saving time: the same local hour is another UTC hour across the change', () => {
    // Europe/Berlin moves to CEST (UTC+2) on Sunday 2026-03-29
    const fri = nextOpening(berlin, new Date('2026-03-27T17:00:00Z'))
    expect(fri?.toISOString()).toBe('2026-03-30T07:00:00.000Z')
    expect(isOpenAt(berlin, new Date('2026-03-30T07:00:00Z'))).toBe(true)
    expect(isOpenAt(berlin, new Date('2026-03-27T07:30:00Z'))).toBe(false) // 08:30 CET
    // New York: a 02:30 opening on the spring-forward night lands just after the jump
    const ny: OfficeHours = { timezone: 'America/New_York', weekly: [{ day: 0, start: '02:30', end: '04:00' }], holidays: [] }
    expect(zonedInstant('2026-03-08', 150, 'America/New_York').toISOString()).toBe('2026-03-08T07:30:00.000Z')
    expect(nextOpening(ny, new Date('2026-03-08T05:00:00Z'))?.toISOString()).toBe('2026-03-08T07:30:00.000Z')
  })

  it('names the field of a bad zone, time, day, date, or a start not before the end', () => {
    const ok = { timezone: 'UTC', weekly: [{ day: 1, start: '09:00', end: '24:00' }], holidays: ['2026-02-28'] }
    expect(hoursProblem(ok)).toBeNull()
    expect(isTimeZone('Mars/Olympus')).toBe(false)
    expect(hoursProblem({ ...ok, timezone: 'Mars/Olympus' })?.[0]).toEqual(['body', 'timezone'])
    expect(hoursProblem({ ...ok, weekly: [{ day: 7, start: '09:00', end: '10:00' }] })?.[0]).toEqual(['body', 'weekly', 0, 'day'])
    expect(hoursProblem({ ...ok, weekly: [{ day: 1, start: '9:00', end: '10:00' }] })?.[0]).toEqual(['body', 'weekly', 0, 'start'])
    expect(hoursProblem({ ...ok, weekly: [{ day: 1, start: '10:00', end: '10:00' }] })?.[0]).toEqual(['body', 'weekly', 0, 'end'])
    expect(hoursProblem({ ...ok, holidays: ['2026-02-30'] })?.[0]).toEqual(['body', 'holidays', 0])
  })

  it('median', () => {
    expect(median([])).toBeNull()
    expect(median([5, 1, 3])).toBe(3)
    expect(median([4, 1, 3, 2])).toBe(2.5)
  })
})
