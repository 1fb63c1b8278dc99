import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/** Thrown (at connect time) when a target resolves to an address the crawler must not reach. */
export class BlockedAddressError extends Error {
  readonly code = 'ESSRF'
  constructor(
    /** The address judged: for an IPv6 address that embeds an IPv4 one, the IPv4 address when it is the reason. */
    readonly address: string,
    readonly range: string,
    /** Where the address came from when it was embedded in an IPv6 address, e.g. `embedded in ::7f00:1, an IPv4-compatible address`. */
    readonly note: string | null = null,
  ) {
    super(`blocked: ${address} is a ${range} address${note ? ` (${note})` : ''}`)
    this.name = 'BlockedAddressError'
  }

  /** `127.0.0.1, a loopback address (embedded in ...)`, for a sentence of the caller's. */
  describe(): string {
    return `${this.address}, a ${this.range} address${this.note ? ` (${this.note})` : ''}`
  }
}

/** The IPv6 forms that carry an IPv4 address, and where in the 128 bits it sits. */
const EMBEDDINGS = [
  // ::ffff:a.b.c.d is a.b.c.d on a dual-stack socket: judged as that address alone
  { kind: 'ipv4Mapped', label: 'an IPv4-mapped address', prefix: '::ffff:0:0/96', at: 96, xor: 0 },
  // ::a.b.c.d (deprecated, RFC 4291): old stacks route it to a.b.c.d through an automatic tunnel
  { kind: 'ipv4Compatible', label: 'an IPv4-compatible address', prefix: '::/96', at: 96, xor: 0 },
  { kind: 'ipv4Translated', label: 'an IPv4-translated (SIIT) address', prefix: '::ffff:0:0:0/96', at: 96, xor: 0 },
  { kind: 'nat64', label: 'a NAT64 address', prefix: '64:ff9b::/96', at: 96, xor: 0 },
  { kind: '6to4', label: 'a 6to4 address', prefix: '2002::/16', at: 16, xor: 0 },
  // Teredo carries the client's address inverted in the last 32 bits
  { kind: 'teredo', label: 'a Teredo address', prefix: '2001::/32', at: 96, xor: 0xffffffff },
].map((e) => ({ ...e, cidr: ipaddr.parseCIDR(e.prefix) as [ipaddr.IPv6, number] }))

interface Embedded {
  kind: string
  label: string
  ipv4: ipaddr.IPv4
}

/** The IPv4 address an IPv6 address carries, if it is one of the forms above (:: and ::1 are not: they are IPv6's own). */
function embeddedIPv4(ip: ipaddr.IPv6): Embedded | null {
  const range = ip.range()
  if (range === 'unspecified' || range === 'loopback') return null
  const e = EMBEDDINGS.find((x) => ip.match(x.cidr))
  if (!e) return null
  const bytes = ip.toByteArray()
  const start = e.at / 8
  const word = (((bytes[start]! << 24) | (bytes[start + 1]! << 16) | (bytes[start + 2]! << 8) | bytes[start + 3]!) ^ e.xor) >>> 0
  const ipv4 = new ipaddr.IPv4([word >>> 24, (word >>> 16) & 255, (word >>> 8) & 255, word & 255])
  return { kind: e.kind, label: e.label, ipv4 }
}

/**
 * Why an address must not be fetched, or null when it is ordinary public unicast. Anything ipaddr.js does
 * not classify as "unicast" is refused: private, loopback, link-local, multicast, broadcast, reserved,
 * unspecified, CGNAT, benchmarking, unique-local. An IPv6 address that embeds an IPv4 address (mapped,
 * compatible, translated, NAT64, 6to4, Teredo) is judged by the IPv4 address inside, which is named; when that
 * one is public, only the IPv4-mapped form passes (it is that address on a dual-stack socket): the others are
 * refused as the tunnels or translators they are, which lead somewhere this check cannot see.
 */
export function judgeAddress(address: string): BlockedAddressError | null {
  const bracketless = address.replace(/^\[|\]$/g, '')
  const bare = bracketless.split('%')[0]!
  if (!ipaddr.isValid(bare)) return new BlockedAddressError(bare, 'invalid')
  const ip = ipaddr.parse(bare)
  if (ip.kind() === 'ipv6') {
    const embedded = embeddedIPv4(ip as ipaddr.IPv6)
    if (embedded) {
      const inner = embedded.ipv4.range()
      if (inner !== 'unicast') {
        const note = embedded.kind === 'ipv4Mapped' ? null : `embedded in ${ip.toString()}, ${embedded.label}`
        return new BlockedAddressError(embedded.ipv4.toString(), inner, note)
      }
      if (embedded.kind === 'ipv4Mapped') return null
      return new BlockedAddressError(ip.toString(), embedded.kind, `a way to ${embedded.ipv4.toString()}`)
    }
  }
  const range = ip.range()
  return range === 'unicast' ? null : new BlockedAddressError(ip.toString(), range)
}

/** The range that makes an address unfit to fetch (see judgeAddress), or null when it is public unicast. */
export function addressProblem(address: string): string | null {
  return judgeAddress(address)?.range ?? null
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `lookup` for net/tls connect that resolves, then refuses the connection when any resolved address is
 * not public. Because it runs inside connect, the address checked is the address connected to: there is
 * no window for a DNS answer to change between the check and the connection (DNS rebinding).
 */
export function createGuardedLookup(allowPrivate: boolean) {
  return function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, [])
      const list = addresses as LookupAddress[]
      if (!allowPrivate) {
        for (const a of list) {
          const problem = judgeAddress(a.address)
          if (problem) return callback(problem, [])
        }
      }
      if (list.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), [])
      if (options.all) return callback(null, list)
      callback(null, list[0]!.address, list[0]!.family)
    })
  }
}

/**
 * The part of the check that can run before connecting: a literal IP in the URL never goes through
 * `lookup`, so it is judged here. Host names are judged at connect time by the guarded lookup.
 */
export function literalAddressProblem(url: string, allowPrivate: boolean): BlockedAddressError | null {
  if (allowPrivate) return null
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  if (!isIP(host)) return null
  return judgeAddress(host)
}
