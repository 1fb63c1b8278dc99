/**
 * A generated phone set for bench:pii (nothing copied from any data file): libphonenumber-js's example
 * mobile number of every region it knows, plus two variants with other last digits, written in the
 * region's national layout, re-separated with dots, with dashes, unbroken, and in international form,
 * each put in sentences with a phone word before it, after it, or none, in the languages the service
 * detects; and non-phones (dates, times, money, order and invoice numbers, IPs, versions, ZIP codes,
 * counts, card numbers, IBANs), with and without a phone word nearby.
 *
 * Split: one region (or non-phone item) in four is held out by a stable hash of its code, and held-out ones
 * are put only in the held-out sentence patterns (their own lists below), so held-out numbers are of
 * regions, and in sentences, never looked at while tuning on dev.
 */
import examples from 'libphonenumber-js/mobile/examples'
import { type CountryCode, getCountries, getExampleNumber, parsePhoneNumberWithError } from 'libphonenumber-js/max'
import { IBAN_LENGTHS } from '../src/modules/tenants/privacy/pii-checks.js'

export type GenKind = 'before' | 'after' | 'none' | 'negative-near' | 'negative'
export interface GenSample {
  split: 'dev' | 'heldout'
  kind: GenKind
  /** What was put in the sentence: a region code for phones, the non-phone's category otherwise. */
  what: string
  text: string
  /** The phone's span (phones only), and the type the item must come out as when it has one (CARD, IBAN). */
  phone?: [number, number]
  expect?: 'CARD' | 'IBAN'
  /** Phones written in international form (+CC). */
  intl?: boolean
}

/** FNV-1a, 32 bits: a split that does not move when the lists grow. */
export function stableHash(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0
  return h
}

function rng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// Sentence patterns; {n} is the number. [dev, held-out] for each kind.
const BEFORE: [string[], string[]] = [
  [
    'Mobile: {n}',
    'Please call me at {n}',
    'My phone number is {n}.',
    'Fax {n}',
    'You can reach me on WhatsApp {n}',
    'Telefon: {n}',
    'Handy {n}',
    'Tel. {n}',
    'Mon portable : {n}',
    'tél. {n}',
    'Mi teléfono es {n}',
    'móvil {n}',
    'cellulare {n}',
    'telefoon {n}',
    'O meu telemóvel é {n}',
  ],
  [
    'Contact number: {n}',
    'office {n}',
    'ring me on {n} tomorrow',
    'Rufnummer {n}',
    'Mobil: {n}',
    'téléphone : {n}',
    'puede llamar al {n}',
    'celular {n}',
    'il mio telefono è {n}',
    'mobiel nummer {n}',
    'telefone {n}',
    'Cell: {n}',
  ],
]
const AFTER: [string[], string[]] = [
  ['{n} -Fax', '{n} (mobile)', 'the {n} office', '{n} mobile', '{n} Handy', '{n} (portable)', '{n} is my cell'],
  ['{n} office', '{n} - cell', '{n} (Telefon)', 'ich bin unter {n} mobil erreichbar', '{n} celular', '{n} (fax)', '{n} mobiel'],
]
const NONE: [string[], string[]] = [
  ['{n}', 'Details: {n}.', 'It is {n}, thanks'],
  ['see {n}', '{n} thanks', 'write down {n} please'],
]
const NEG_NEAR: [string[], string[]] = [
  ['Call us before {x}', 'My phone broke on {x}', 'Fax received {x}', 'Handy kaputt: {x}', 'I called about {x}'],
  ['Our office reopens {x}', 'téléphone acheté {x}', 'Mobile plan: {x}', 'llamé por {x}'],
]
const NEG_PLAIN: [string[], string[]] = [
  ['Paid {x}', 'Reference: {x}', '{x}', 'It says {x} here'],
  ['we noted {x}', 'Status of {x}?', 'see {x} below'],
]

function ibanOf(cc: string, bban: string): string {
  const rearranged = `${bban}${cc}00`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55))
  let r = 0
  for (const ch of rearranged) r = (r * 10 + Number(ch)) % 97
  const check = String(98 - r).padStart(2, '0')
  return `${cc}${check}${bban}`.replace(/(.{4})(?!$)/g, '$1 ')
}

function luhnComplete(prefix: string, length: number, random: () => number): string {
  let d = prefix
  while (d.length < length - 1) d += String(Math.floor(random() * 10))
  for (let c = 0; c < 10; c++) {
    const s = d + c
    let sum = 0
    for (let i = 0; i < s.length; i++) {
      let v = Number(s[s.length - 1 - i])
      if (i % 2 === 1) v = v * 2 > 9 ? v * 2 - 9 : v * 2
      sum += v
    }
    if (sum % 10 === 0) return s
  }
  return d
}

/** Non-phones by category: every one a number a visitor might write that is not a phone number. */
function nonPhones(random: () => number): Array<{ what: string; x: string; expect?: 'CARD' | 'IBAN' }> {
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join('')
  const out: Array<{ what: string; x: string; expect?: 'CARD' | 'IBAN' }> = []
  for (const x of ['2026-11-26', '12.11.2026', '26/11/2026', '11-26-2026', '2026/11/26', '3.4.2025', '2025-03-04 14:30:22']) out.push({ what: 'date', x })
  for (const x of ['14:30', '10:30-11:45', '08:00 - 17:00', '0800-1700']) out.push({ what: 'time', x })
  for (const x of ['1.234,56 €', '$1,234.56', 'EUR 12 345,00', '1 234 567,89 €', '€ 12.345.678', 'USD 1,250,000']) out.push({ what: 'money', x })
  for (const x of ['ORD-10423456', 'order 10423456', 'order #1042 3456', 'Bestellnummer 10423456', 'commande n° 10423456']) out.push({ what: 'order', x })
  for (const x of ['invoice no. 20231145', 'INV-2023-001145', 'Rechnung Nr. 2023114578', 'invoice 2023 1145 78', 'factura 20231145'])
    out.push({ what: 'invoice', x })
  for (const x of ['192.168.10.254', '10.0.0.138', '172.16.254.1']) out.push({ what: 'ip', x })
  for (const x of ['10.0.19045.3693', 'v2.14.1', 'version 16.0.17328.20162', 'build 22631.2861']) out.push({ what: 'version', x })
  for (const x of ['90210-1234', '75008 Paris', '10115 Berlin', 'ZIP 30301', 'NL-1012 AB']) out.push({ what: 'zip', x })
  for (const x of ['12 500 000', '1 245 890', '10 20 30 40 50', '2019-2023']) out.push({ what: 'count', x })
  // numbers with a leading zero, in groups, that are not phones (the shape a trunk prefix gives)
  for (const x of [
    '01 12 2025',
    '31 01 2026',
    'sort code 04-00-04 12345678',
    'Konto 0532 0130 00',
    'Kto. 0532013000',
    'invoice 02-2025-0045',
    'ISBN 0-306-40615-2',
    'ref 0012-3456-78',
    '09 00 - 17 00',
  ])
    out.push({ what: 'zero-led', x })
  for (let k = 0; k < 6; k++) {
    const cc = ['DE', 'FR', 'GB', 'NL', 'ES', 'IT'][k]
    const bban = cc === 'GB' ? `NWBK${digits(14)}` : cc === 'NL' ? `ABNA${digits(10)}` : cc === 'IT' ? `X${digits(22)}` : digits(IBAN_LENGTHS[cc] - 4)
    out.push({ what: 'iban', x: ibanOf(cc, bban), expect: 'IBAN' })
  }
  for (const prefix of ['4', '51', '55', '4', '6011']) {
    const card = luhnComplete(prefix, 16, random)
    out.push({ what: 'card', x: card.replace(/(\d{4})(?!$)/g, '$1 '), expect: 'CARD' })
  }
  const amex = luhnComplete('37', 15, random)
  out.push({ what: 'card', x: `${amex.slice(0, 4)} ${amex.slice(4, 10)} ${amex.slice(10)}`, expect: 'CARD' })
  return out
}

/** A number of the region in several written forms: national layout, dots, dashes, unbroken, international. */
function layouts(national: string, international: string): string[] {
  const groups = national.split(/[^\d]+/).filter(Boolean)
  return [national, groups.join('.'), groups.join('-'), groups.join(''), international]
}

export function generatedPhoneSet(): GenSample[] {
  const out: GenSample[] = []
  const random = rng(2026)
  const splitOf = (key: string) => (stableHash(key) % 4 === 0 ? 1 : 0)
  const SPLIT = ['dev', 'heldout'] as const
  const place = (pattern: string, value: string, token: string): [string, number] => {
    const at = pattern.indexOf(token)
    return [pattern.slice(0, at) + value + pattern.slice(at + token.length), at]
  }
  let turn = 0
  for (const region of getCountries() as CountryCode[]) {
    const example = getExampleNumber(region, examples as never)
    if (!example) continue
    const split = splitOf(region)
    const nsn = example.nationalNumber
    const numbers = [example]
    for (let v = 0; v < 2; v++) {
      const tail = String(Math.floor(random() * 10 ** Math.min(4, nsn.length - 2))).padStart(Math.min(4, nsn.length - 2), '0')
      try {
        const p = parsePhoneNumberWithError(nsn.slice(0, nsn.length - tail.length) + tail, region)
        if (p.isValid()) numbers.push(p)
      } catch {}
    }
    for (const phone of numbers) {
      for (const written of layouts(phone.formatNational(), phone.formatInternational())) {
        for (const [kind, lists] of [
          ['before', BEFORE],
          ['after', AFTER],
          ['none', NONE],
        ] as const) {
          // the patterns of the region's split, walked in turn: each number meets a different sentence of each kind
          const patterns = lists[split]
          const [text, at] = place(patterns[turn++ % patterns.length], written, '{n}')
          out.push({ split: SPLIT[split], kind, what: region, text, phone: [at, at + written.length], intl: written.startsWith('+') })
        }
      }
    }
  }
  for (const item of nonPhones(random)) {
    const split = splitOf(item.x)
    for (const [kind, lists] of [
      ['negative-near', NEG_NEAR],
      ['negative', NEG_PLAIN],
    ] as const) {
      for (const pattern of lists[split]) out.push({ split: SPLIT[split], kind, what: item.what, text: place(pattern, item.x, '{x}')[0], expect: item.expect })
    }
  }
  return out
}
