import { randomBytes } from 'node:crypto'

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

/** `ch_` + 18 characters of [a-z0-9], from a CSPRNG (rejection sampling keeps it unbiased). */
export function newPublicId(): string {
  let out = ''
  while (out.length < 18) {
    for (const b of randomBytes(32)) {
      if (b < 252 && out.length < 18) out += ALPHABET[b % 36]
    }
  }
  return `ch_${out}`
}

/**
 * Normalises one allowed-domain entry to a lower-case host: scheme, credentials, port, path and a leading
 * `*.` are dropped. Returns null when what is left is not a host name with a dot, except `localhost`, which
 * local development needs (contract, later decisions: `localhost` and `host:port` are accepted; the port is
 * dropped like any other, so `localhost:5173` allows every local port).
 */
export function normalizeDomain(input: string): string | null {
  let s = input.trim().toLowerCase()
  if (!s) return null
  s = s.replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
  s = s.replace(/^[^@/]*@/, '')
  s = s.split(/[/?#]/)[0] ?? ''
  s = s.replace(/:\d*$/, '')
  s = s.replace(/^\*\./, '').replace(/\.$/, '')
  if (s === 'localhost') return s
  if (s.length > 253 || !s.includes('.')) return null
  const labels = s.split('.')
  const ok = labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l))
  return ok ? s : null
}

/** Normalises and de-duplicates; returns the index of the first bad entry instead when there is one. */
export function normalizeDomains(inputs: string[]): { domains: string[] } | { badIndex: number } {
  const out: string[] = []
  for (let i = 0; i < inputs.length; i++) {
    const d = normalizeDomain(inputs[i]!)
    if (!d) return { badIndex: i }
    if (!out.includes(d)) out.push(d)
  }
  return { domains: out }
}

/** True when `host` is one of the domains or a subdomain of one. */
export function hostAllowed(host: string, domains: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '')
  return domains.some((d) => h === d || h.endsWith(`.${d}`))
}
