import { describe, expect, it } from 'vitest'
import { ticketAddressesIn, ticketOfReplyAddress, ticketReplyAddress, ticketReplyKey } from './email-channel.ticket-reply.js'

const key = ticketReplyKey('a'.repeat(64))
const other = ticketReplyKey('b'.repeat(64))
const id = '0b7e7c7a-3f7e-4d7a-9c1e-5a2b3c4d5e6f'

describe("a ticket's reply address", () => {
  it('round-trips, fits a local part, and is checked', () => {
    const a = ticketReplyAddress(key, id, 'Inbound.Test')!
    expect(a).toMatch(/^ticket\.[0-9a-z]+\.[0-9a-f]{20}@inbound\.test$/)
    expect(a.split('@')[0]!.length).toBeLessThanOrEqual(64)
    expect(ticketOfReplyAddress(key, a, 'inbound.test')).toBe(id)
    expect(ticketOfReplyAddress(key, a.toUpperCase(), 'inbound.test')).toBe(id)
    // another key, another domain, a changed check or id: not a ticket
    expect(ticketOfReplyAddress(other, a, 'inbound.test')).toBeNull()
    expect(ticketOfReplyAddress(key, a.replace('inbound.test', 'other.test'), 'inbound.test')).toBeNull()
    const flipped = a.replace(/([0-9a-f])@/, (_m, c: string) => `${c === '0' ? '1' : '0'}@`)
    expect(flipped).not.toBe(a)
    expect(ticketOfReplyAddress(key, flipped, 'inbound.test')).toBeNull()
    expect(ticketOfReplyAddress(key, 'ticket.zzzz.0123456789abcdef0123@inbound.test', 'inbound.test')).toBeNull()
    expect(ticketOfReplyAddress(key, 'bot-1@inbound.test', 'inbound.test')).toBeNull()
    expect(ticketReplyAddress(key, 'not-a-uuid', 'inbound.test')).toBeNull()
  })

  it('is found in the recipient headers only', () => {
    const a = ticketReplyAddress(key, id, 'inbound.test')!
    const lines = [
      { key: 'to', line: `To: "Acme ESC-0001" <${a}>` },
      { key: 'subject', line: `Subject: ${a}` },
    ]
    expect(ticketAddressesIn(lines, 'inbound.test')).toEqual([a])
    expect(ticketAddressesIn([{ key: 'cc', line: 'Cc: someone@example.test' }], 'inbound.test')).toEqual([])
  })
})
