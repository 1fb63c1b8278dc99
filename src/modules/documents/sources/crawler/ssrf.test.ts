import { describe, expect, it } from 'vitest'
import { addressProblem, createGuardedLookup, judgeAddress, literalAddressProblem } from './ssrf.js'

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
      '2002:7f00:1::': 'loopback',
      '[::1]': 'loopback',
    }
    for (const [ip, range] of Object.entries(cases)) expect(addressProblem(ip), ip).toBe(range)
  })
  it('judges the IPv4 address inside every IPv6 form that embeds one, and names it', () => {
    const cases: [string, RegExp][] = [
      // IPv4-compatible: loopback and the cloud metadata address (ipaddr.js calls these plain unicast)
      ['::7f00:1', /^blocked: 127\.0\.0\.1 is a loopback address \(embedded in ::7f00:1, an IPv4-compatible address\)$/],
      ['::a9fe:a9fe', /^blocked: 169\.254\.169\.254 is a linkLocal address \(embedded in ::a9fe:a9fe, an IPv4-compatible address\)$/],
      ['::127.0.0.1', /^blocked: 127\.0\.0\.1 is a loopback address/],
      ['::10.0.0.1', /^blocked: 10\.0\.0\.1 is a private address/],
      // IPv4-mapped: that address on a dual-stack socket
      ['::ffff:7f00:1', /^blocked: 127\.0\.0\.1 is a loopback address$/],
      ['::ffff:a9fe:a9fe', /^blocked: 169\.254\.169\.254 is a linkLocal address$/],
      // IPv4-translated (SIIT), NAT64, 6to4, Teredo (client address inverted)
      ['::ffff:0:7f00:1', /^blocked: 127\.0\.0\.1 is a loopback address \(embedded in ::ffff:0:7f00:1, an IPv4-translated/],
      ['64:ff9b::7f00:1', /^blocked: 127\.0\.0\.1 is a loopback address \(embedded in 64:ff9b::7f00:1, a NAT64 address\)$/],
      ['64:ff9b::a9fe:a9fe', /^blocked: 169\.254\.169\.254 is a linkLocal address/],
      ['2002:7f00:1::', /^blocked: 127\.0\.0\.1 is a loopback address \(embedded in 2002:7f00:1::, a 6to4 address\)$/],
      ['2002:a9fe:a9fe::1', /^blocked: 169\.254\.169\.254 is a linkLocal address/],
      ['2001:0:4136:e378:8000:63bf:80ff:fffe', /^blocked: 127\.0\.0\.1 is a loopback address \(embedded in .*, a Teredo address\)$/],
    ]
    for (const [ip, reason] of cases) expect(judgeAddress(ip)?.message, ip).toMatch(reason)
  })
  it('refuses a tunnel or translator to a public IPv4 address (it leads where the check cannot see), not the mapped form', () => {
    const cases: Record<string, string> = {
      '::808:808': 'ipv4Compatible',
      '::ffff:0:808:808': 'ipv4Translated',
      '64:ff9b::808:808': 'nat64',
      '2002:808:808::1': '6to4',
      '2001:0:4136:e378:8000:63bf:f7f7:f7f7': 'teredo',
      // the NAT64 local-use prefix (RFC 8215): no fixed place for the IPv4 address, refused as a whole
      '64:ff9b:1::808:808': 'rfc6052',
    }
    for (const [ip, range] of Object.entries(cases)) expect(addressProblem(ip), ip).toBe(range)
    expect(judgeAddress('2002:808:808::1')?.message).toBe('blocked: 2002:808:808::1 is a 6to4 address (a way to 8.8.8.8)')
    expect(addressProblem('::ffff:8.8.8.8')).toBeNull()
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
  it('judges IPv6 literals that embed an IPv4 address by that address', () => {
    for (const url of ['http://[::7f00:1]/', 'http://[::127.0.0.1]:8080/', 'http://[::ffff:7f00:1]/', 'http://[64:ff9b::7f00:1]/', 'http://[2002:7f00:1::]/'])
      expect(literalAddressProblem(url, false)?.message, url).toMatch(/^blocked: 127\.0\.0\.1 is a loopback address/)
    expect(literalAddressProblem('http://[::a9fe:a9fe]/latest/meta-data/', false)?.message).toMatch(/^blocked: 169\.254\.169\.254 is a linkLocal address/)
  })
  it('judges decimal, octal, hexadecimal and short IPv4 hosts as the address they mean (the URL parser normalises them)', () => {
    for (const url of ['http://2130706433/', 'http://0x7f.1/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://127.1/', 'http://017700000001/'])
      expect(literalAddressProblem(url, false)?.message, url).toBe('blocked: 127.0.0.1 is a loopback address')
    expect(literalAddressProblem('http://2852039166/', false)?.message).toBe('blocked: 169.254.169.254 is a linkLocal address')
    expect(literalAddressProblem('http://0xa9.0xfe.0xa9.0xfe/', false)?.message).toBe('blocked: 169.254.169.254 is a linkLocal address')
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
