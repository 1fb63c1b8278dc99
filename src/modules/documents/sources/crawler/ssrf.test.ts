import { describe, expect, it } from 'vitest'
import { addressProblem, createGuardedLookup, literalAddressProblem } from './ssrf.js'

describe('addressProblem', () => {
  it('refuses every non-public range', () => {
    const cases: Record<string, string> = {
      '127.0.0.1': 'loopback',
      '10.1.2.3': 'private',
      '172.16.0.1': 'private',
      '192.168.1.1': 'private',
      '169.254.169.254': 'linkLocal',
      '100.64.0.1': 'carrierGradeNat',
      '0.0.0.0': 'unspecified',
      '224.0.0.1': 'multicast',
      '255.255.255.255': 'broadcast',
      '240.0.0.1': 'reserved',
      '::1': 'loopback',
      '::': 'unspecified',
      'fe80::1': 'linkLocal',
      'fd00::1': 'uniqueLocal',
      'ff02::1': 'multicast',
      '::ffff:127.0.0.1': 'loopback',
      '::ffff:10.0.0.1': 'private',
      '2002:7f00:1::': '6to4',
      '[::1]': 'loopback',
    }
    for (const [ip, range] of Object.entries(cases)) expect(addressProblem(ip), ip).toBe(range)
  })
  it('allows public unicast', () => {
    for (const ip of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(addressProblem(ip), ip).toBeNull()
  })
})

describe('literal and resolved addresses', () => {
  it('judges IP literals in URLs unless private networks are allowed', () => {
    expect(literalAddressProblem('http://127.0.0.1:8080/', false)?.message).toMatch(/loopback/)
    expect(literalAddressProblem('http://[::1]/', false)?.message).toMatch(/loopback/)
    expect(literalAddressProblem('http://10.0.0.5/', false)?.message).toMatch(/private/)
    expect(literalAddressProblem('http://example.com/', false)).toBeNull()
    expect(literalAddressProblem('http://127.0.0.1/', true)).toBeNull()
  })
  it('refuses a host name that resolves to loopback, at lookup time', async () => {
    const lookup = createGuardedLookup(false)
    const err = await new Promise<Error | null>((resolve) => lookup('localhost', {}, (e) => resolve(e)))
    expect(err?.message).toMatch(/^blocked: .* is a loopback address$/)
    const open = createGuardedLookup(true)
    const ok = await new Promise<string>((resolve, reject) => open('localhost', {}, (e, a) => (e ? reject(e) : resolve(a as string))))
    expect(['127.0.0.1', '::1']).toContain(ok)
  })
})
