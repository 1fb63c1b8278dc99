/** Time as the service sees it. Every expiry and schedule reads this, so tests can move time forward. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock tests can move. */
export class ManualClock implements Clock {
  private offsetMs = 0
  now(): Date {
    return new Date(Date.now() + this.offsetMs)
  }
  advance(ms: number): void {
    this.offsetMs += ms
  }
}

export const addSeconds = (d: Date, s: number): Date => new Date(d.getTime() + s * 1000)
