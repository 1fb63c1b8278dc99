import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/** Thrown (at connect time) when a target resolves to an address the crawler must not reach. */
export class BlockedAddressError extends Error {
  readonly code = 'ESSRF'
  constructor(
    readonly address: string,
    readonly range: string,
  ) {
    super(`blocked: ${address} is a ${range} address`)
    this.name = 'BlockedAddressError'
  }
}

/**
 * Why an address must not be fetched, or null when it is ordinary public unicast. Anything ipaddr.js does
 * not classify as "unicast" is refused: private, loopback, link-local, multicast, broadcast, reserved,
 * unspecified, CGNAT, benchmarking, unique-local, IPv4-mapped/translated and 6to4/Teredo tunnels (which
 * embed an IPv4 address we would otherwise have to re-check).
 */
export function addressProblem(address: string): string | null {
  const ip = parseAddress(address)
  if (!ip) return 'invalid'
  const range = ip.range()
  return range === 'unicast' ? null : range
}

function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  if (!ipaddr.isValid(bare)) return null
  const ip = ipaddr.parse(bare)
  // ::ffff:127.0.0.1 is 127.0.0.1 on a dual-stack socket; judge (and name) the IPv4 inside.
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip
}

const blocked = (address: string, range: string) => new BlockedAddressError(parseAddress(address)?.toString() ?? address, range)

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
          const problem = addressProblem(a.address)
          if (problem) return callback(blocked(a.address, problem), [])
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
  const problem = addressProblem(host)
  return problem ? blocked(host, problem) : null
}
