import { describe, expect, it } from 'vitest'
import { identifierBefore, phoneLabelAdjacent, phoneWordAfter, phoneWordBefore } from './pii-phone-context.js'
import { detectPii, type RedactOptions } from './pii.fns.js'

const ALL = new Set(['ID_DOC', 'IP', 'URL_TOKEN'] as const)
const phones = (text: string, opts: RedactOptions = {}) =>
  detectPii(text, opts)
    .filter((e) => e.type === 'PHONE')
    .map((e) => text.slice(e.start, e.end))
const types = (text: string) => detectPii(text, { optional: ALL }).map((e) => `${e.type}:${text.slice(e.start, e.end)}`)

describe('national numbers of regions outside the defaults, next to a phone word', () => {
  it.each([
    // the word after the number
    ['0664 123456 -Fax', '0664 123456'], // Austria
    ['please use the 078 123 45 67 office', '078 123 45 67'], // Switzerland
    ['0470 12 34 56 mobile', '0470 12 34 56'], // Belgium
    ['070-123 45 67 (mobile)', '070-123 45 67'], // Sweden
    ['601.123.456 (Handy)', '601.123.456'], // Czechia, dotted
    ['0532 123 45 67 celular', '0532 123 45 67'], // Turkey
    ['223454 is my cell', '223454'], // Greenland: six digits only right next to the word
    // the word before the number, within a few words
    ['Mobile: 091 234 567', '091 234 567'], // Cambodia
    ['please call me at 0712 123456', '0712 123456'], // Kenya
    ['Telefon 0664-123-456', '0664-123-456'],
    ['Handynummer: 0664 1234567', '0664 1234567'],
    ['Mon portable : 0470.12.34.56', '0470.12.34.56'],
    ['Mi teléfono es 0991 234 567', '0991 234 567'],
    ['llámame al 071 234 567', '071 234 567'],
    ['il mio cellulare è 092 123 4567', '092 123 4567'],
    ['mijn mobiel nummer is 0470 123456', '0470 123456'],
    ['O meu telemóvel é 912 345 678', '912 345 678'],
    ['Телефон: 8 (912) 345-67-89', '8 (912) 345-67-89'],
    ['τηλέφωνο 691 234 5678', '691 234 5678'],
    ['電話 090-1234-5678', '090-1234-5678'],
    ['전화 010-1234-5678', '010-1234-5678'],
    ['טלפון 052-123-4567', '052-123-4567'],
    ['Fax 077.123456', '077.123456'],
    ['Phone:\n5123 4567', '5123 4567'],
  ])('%j', (text, phone) => expect(phones(text)).toEqual([phone]))

  it('takes every number of a list after one phone word, and leaves a label to the value after it', () => {
    expect(phones('Tel 0664 123456, 0664 123457')).toEqual(['0664 123456', '0664 123457'])
    expect(phones('ticket 12345678 Fax: 0664 123456')).toEqual(['0664 123456'])
    expect(phones('12345678 mobile 0664 123456')).toEqual(['0664 123456'])
  })
})

describe('phone-shaped numbers without a phone word', () => {
  it.each([
    ['it is +43 664 123456', '+43 664 123456'],
    ['+290 8999 12', '+290 8999 12'],
    ['write to 0043 664 123 456', '0043 664 123 456'],
    ['(089) 123 4567', '(089) 123 4567'],
    ['see 0664/1234567', '0664/1234567'],
    ['see 0664 123456', '0664 123456'],
    ['+41 (0)96 471 07 95 x12', '+41 (0)96 471 07 95 x12'],
  ])('%j', (text, phone) => expect(phones(text)).toEqual([phone]))

  it.each(['it is 664123456', 'the figure was 5123 4567', 'see 71234567 below'])('leaves %j alone (a region the matcher is not given, no word)', (text) =>
    expect(phones(text)).toEqual([]),
  )
})

describe('numbers that are not phones, even with a phone word nearby', () => {
  it.each([
    'Call us before 2026-11-26',
    'Fax received 12.11.2026',
    'phone bought 31 01 2026',
    'my phone cost 1.234,56 €',
    'mobile plan 1.234,56',
    'Phone order ORD-10423456',
    'I called about invoice 20231145',
    'I called about invoice no. 20231145',
    'Handy kaputt, Rechnung Nr. 2023114578',
    'Kundennummer 12345678, Handy kaputt',
    'téléphone: commande n° 10423456',
    'teléfono roto, pedido 10423456',
    'office IP 192.168.10.254',
    'call back at 14:30',
    'office hours 08:00 - 17:00',
    'office hours 0800-1700',
    'office hours 09 00 - 17 00',
    'Office 16.0.17328.20162 is installed',
    'office: Springfield, IL 62704-1234',
    'mobile 90210-1234',
    'call 10 20 30 40 50',
    'phone sales 12 500 000',
    'Fax 2019-2023',
    'Handy 96.123456',
    'sort code 04-00-04 12345678, call',
    'my phone: Kto. 0532013000',
  ])('leaves %j alone', (text) => expect(phones(text)).toEqual([]))

  it.each(['invoice 20231145', 'order 10423456 shipped', 'INV-2023-001145', 'It says factura 20231145 here', 'version 10.0.19045.3693'])(
    'leaves %j alone (no phone word)',
    (text) => expect(phones(text)).toEqual([]),
  )

  it('cards and IBANs next to a phone word stay cards and IBANs', () => {
    expect(types('Handy 4111 1111 1111 1111')).toEqual(['CARD:4111 1111 1111 1111'])
    expect(types('Fax DE89 3704 0044 0532 0130 00')).toEqual(['IBAN:DE89 3704 0044 0532 0130 00'])
    expect(types('mobile NO93 8601 1117 947')).toEqual(['IBAN:NO93 8601 1117 947'])
  })

  it('an SSN layout inside an international number is part of the phone, not an SSN', () => {
    expect(types('cellulare +688 90 1234')).toEqual(['PHONE:+688 90 1234'])
    expect(types('SSN 123-45-6789')).toEqual(['ID_DOC:123-45-6789'])
  })
})

describe('the words around a number', () => {
  // '#' stands for the number
  const wordBefore = (text: string) => phoneWordBefore(text, text.indexOf('#'))
  const wordAfter = (text: string) => phoneWordAfter(text, text.indexOf('#') + 1)
  it('a phone word before: within three words, no other value between, a label on the line above', () => {
    expect(wordBefore('Please call me at #')).toBe(true)
    expect(wordBefore('Phone:\n#')).toBe(true)
    expect(wordBefore('Phone: x\nName: #')).toBe(false)
    expect(wordBefore('call the shop down the road at #')).toBe(false)
    expect(wordBefore('my phone is 5 years old, #')).toBe(false)
    expect(wordBefore('reach level #')).toBe(false)
    expect(wordBefore('reach me at #')).toBe(true)
    expect(wordBefore('direct line #')).toBe(true)
    expect(wordBefore('line #')).toBe(false)
  })

  it('a phone word after: on the same line, and not the label of the next value', () => {
    expect(wordAfter('# (mobile)')).toBe(true)
    expect(wordAfter('# -Fax')).toBe(true)
    expect(wordAfter('# is our office number')).toBe(true)
    expect(wordAfter('# Fax: 0123')).toBe(false)
    expect(wordAfter('# mobile 0123')).toBe(false)
    expect(wordAfter('#\nMobile')).toBe(false)
    expect(wordAfter('# number')).toBe(false)
  })

  it('a short number needs the word right next to it, and not a place word', () => {
    expect(phoneLabelAdjacent('Fax 401234', 4, 10)).toBe(true)
    expect(phoneLabelAdjacent('Fax to 401234', 7, 13)).toBe(false)
    expect(phoneLabelAdjacent('office 401234', 7, 13)).toBe(false)
  })

  it('identifier words just before a number, in several languages', () => {
    for (const before of ['order ', 'Order number: ', 'invoice no. ', 'Rechnung Nr. ', 'Kundennummer ', 'commande n° ', 'pedido ', 'fattura ', 'ref #'])
      expect(identifierBefore(`${before}1`, before.length), before).toBe(true)
    for (const before of ['Telefonnummer ', 'Handynummer: ', 'Phone number: ', 'call me at '])
      expect(identifierBefore(`${before}1`, before.length), before).toBe(false)
  })
})

describe('speed of the shape rule', () => {
  // ten times the longest question a visitor can send; the 100 KB cases in pii.fns.test.ts bound the matcher's path
  const N = 10_000
  const adversarial: Record<string, string> = {
    'digit groups after a phone word': `Phone: ${'12 '.repeat(N / 3)}`,
    'every separator': `call ${'0 1-2.3 (4)5/'.repeat(N / 13)}`,
    'a plus and single digits, then a letter': `mobile +${'1 '.repeat(N / 2)}x`,
    'one run of digits': `fax ${'9'.repeat(N)}`,
    extensions: `tel 0664 123456 x${'1 x'.repeat(N / 3)}`,
    'open parentheses': `Handy (${'0('.repeat(N / 2)}`,
  }
  it.each(Object.keys(adversarial))('redacts 10 KB of %s in under 50 ms of CPU', (name) => {
    const text = adversarial[name]
    detectPii(text.slice(0, 1000)) // warm up
    let best = Number.POSITIVE_INFINITY
    for (let i = 0; i < 3; i++) {
      // this process's CPU time, not the wall clock: other processes on a loaded machine do not count
      const t = process.cpuUsage()
      detectPii(text)
      const used = process.cpuUsage(t)
      best = Math.min(best, (used.user + used.system) / 1000)
    }
    // catastrophic backtracking takes seconds here
    expect(best).toBeLessThan(50)
  })
})
