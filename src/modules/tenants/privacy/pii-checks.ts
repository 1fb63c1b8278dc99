/**
 * Checksums and plausibility checks used by the redaction detectors in pii.fns.ts (pure, no I/O).
 * A checksum turns a "looks like" into an "is": it is what lets card and IBAN detection be both
 * eager and precise.
 */

/** Luhn (mod 10) check over a digit string. */
export function luhnValid(digits: string): boolean {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (d < 0 || d > 9) return false
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return digits.length > 0 && sum % 10 === 0
}

/**
 * Issuer prefix (IIN) and length plausibility for payment cards: Visa, Mastercard (incl. 2-series),
 * Amex, Discover, Diners, JCB (incl. the legacy 1800/2131 15-digit ranges), Maestro (incl. legacy 0604),
 * UnionPay. Keeps long Luhn-passing order or tracking numbers from being taken for cards.
 */
export function cardPrefixPlausible(d: string): boolean {
  const n = d.length
  const p2 = Number(d.slice(0, 2))
  const p4 = Number(d.slice(0, 4))
  switch (d[0]) {
    case '4':
      return n >= 13 && n <= 19
    case '5':
      return n >= 12 && n <= 19 // 51-55 Mastercard, 50/56-59 Maestro
    case '2':
      return (p4 >= 2221 && p4 <= 2720 && n === 16) || (p4 === 2131 && n === 15)
    case '3':
      if (p2 === 34 || p2 === 37) return n === 15
      if (p2 === 35) return n >= 16 && n <= 19
      return (p2 === 30 || p2 === 36 || p2 === 38 || p2 === 39) && n >= 14 && n <= 19
    case '6':
      return n >= 12 && n <= 19 // Discover, Maestro, UnionPay, RuPay
    case '1':
      return p4 === 1800 && n === 15
    case '0':
      return p4 === 604 && n >= 12 && n <= 19
    default:
      return false
  }
}

/** IBAN lengths per country (SWIFT IBAN registry). */
export const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
}

/** ISO 13616 mod-97 check over an upper-case IBAN without spaces. */
export function ibanChecksumValid(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban)) return false
  const rearranged = iban.slice(4) + iban.slice(0, 4)
  let rem = 0
  for (let i = 0; i < rearranged.length; i++) {
    const c = rearranged.charCodeAt(i)
    const v = c >= 65 ? c - 55 : c - 48
    rem = v >= 10 ? (rem * 100 + v) % 97 : (rem * 10 + v) % 97
  }
  return rem === 1
}

/** US Social Security Number rules: area 001-899 except 666, group 01-99, serial 0001-9999. */
export function ssnValid(area: string, group: string, serial: string): boolean {
  const a = Number(area)
  if (a === 0 || a === 666 || a >= 900) return false
  if (group === '00' || serial === '0000') return false
  // Numbers that were published in advertising or are obvious placeholders.
  const all = area + group + serial
  if (all === '078051120' || all === '219099999' || /^(\d)\1{8}$/.test(all)) return false
  return true
}

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<string, number>()
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1)
  let h = 0
  for (const c of counts.values()) {
    const p = c / s.length
    h -= p * Math.log2(p)
  }
  return h
}

const charClass = (c: number) => (c >= 48 && c <= 57 ? 0 : c >= 65 && c <= 90 ? 1 : c >= 97 && c <= 122 ? 2 : 3)

/**
 * Looks like a machine-made secret rather than a word, identifier or path: upper, lower and digits,
 * frequent switches between character classes (camelCase identifiers switch rarely) and high entropy.
 */
export function looksLikeSecret(s: string): boolean {
  if (s.length < 20) return false
  let upper = 0
  let lower = 0
  let digit = 0
  let switches = 0
  let prev = -1
  for (let i = 0; i < s.length; i++) {
    const k = charClass(s.charCodeAt(i))
    if (k === 0) digit++
    else if (k === 1) upper++
    else if (k === 2) lower++
    if (prev !== -1 && k !== prev) switches++
    prev = k
  }
  if (digit === 0 || upper === 0 || lower === 0) return false
  // random base62 switches class ~62% of the time, camelCase identifiers about twice per word; words
  // also leave long lower-case runs, which random tokens rarely have
  const ratio = switches / (s.length - 1)
  if (ratio < 0.35) return false
  if (ratio < 0.5 && longestLowerRun(s) > 4) return false
  return entropy(s) >= 3.5
}

function longestLowerRun(s: string): number {
  let best = 0
  let run = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    run = c >= 97 && c <= 122 ? run + 1 : 0
    if (run > best) best = run
  }
  return best
}
