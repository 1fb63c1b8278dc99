import { describe, expect, it } from 'vitest'
import { DEFAULT_PHONE_REGIONS, phoneRegions } from './pii-phone.fns.js'
import { detectPii, type RedactOptions } from './pii.fns.js'

const phones = (text: string, opts: RedactOptions = {}) =>
  detectPii(text, opts)
    .filter((e) => e.type === 'PHONE')
    .map((e) => text.slice(e.start, e.end))
const types = (text: string) =>
  detectPii(text, { optional: new Set(['ID_DOC', 'IP', 'URL_TOKEN'] as const) }).map((e) => `${e.type}:${text.slice(e.start, e.end)}`)

describe('phone numbers beyond the North American layout', () => {
  it.each([
    ['Landline 8 (952) 282-10-79', '8 (952) 282-10-79'],
    ['send it to (41) 98339-6219 please', '(41) 98339-6219'],
    ['Desk: (53) 491-823', '(53) 491-823'],
    ['numero 0 (585) 343 92 02', '0 (585) 343 92 02'],
    ['I got a strange SMS from 09.16.21.18.58', '09.16.21.18.58'],
    ['work: 135 0249 3018', '135 0249 3018'],
    ['They are not answering at 97 348533', '97 348533'],
    ['the hotline 5553 3009 did not pick up', '5553 3009'],
    ['tél : 792 3900', '792 3900'],
    ['You can reach me on 0611 234 567 after five', '0611 234 567'],
    ['610 555 0199 is my new cell', '610 555 0199'],
    ['Hi, 0172 5551234 here, my parcel is lost', '0172 5551234'],
  ])('%s', (text, phone) => {
    expect(phones(text)).toEqual([phone])
  })

  it.each([
    'rows 10 20 30 40 50',
    'we paid 12 500 000 for it',
    'number of orders 1 245 890',
    'the ticket number is 4421 9981',
    'line 1234 5678 of the log',
    'reach level 1234 5678 in the game',
    'contact form 2023/45/12',
    'Delivered 12/05/2024 14:30:22',
    'We met 23.05.2022 in Zurich',
    'I called 3 times about order 12345678',
  ])('leaves %s alone', (text) => {
    expect(phones(text)).toEqual([])
  })
})

describe('phone numbers found with libphonenumber-js', () => {
  it.each([
    // international form: the country code says which plan, no region hint needed
    ['you can call me on +44 7911 123456', '+44 7911 123456'],
    ['+81 3-1234-5678 is the Tokyo office', '+81 3-1234-5678'],
    ['Büro +41 44 668 18 00', '+41 44 668 18 00'],
    ['+61 2 9374 4000', '+61 2 9374 4000'],
    ['WhatsApp +55 11 91234-5678', '+55 11 91234-5678'],
    ['+1 650 253 0000 x123', '+1 650 253 0000 x123'],
    ['0033 1 42 68 53 00', '0033 1 42 68 53 00'],
    // national numbers written the way their country writes them need no phone word
    ['(650) 253-0000', '(650) 253-0000'],
    ['650.253.0000', '650.253.0000'],
    ['(650) 253-0000 ext. 123', '(650) 253-0000 ext. 123'],
    ['07911 123456', '07911 123456'],
    ['Bureau 01 42 68 53 00 demain', '01 42 68 53 00'],
    ['030 901820', '030 901820'],
    ['(02) 9374 4000', '(02) 9374 4000'],
    ['0412 345 678', '0412 345 678'],
    ['(11) 91234-5678', '(11) 91234-5678'],
    // other layouts, next to a phone word
    ['Telefono 06 6982 1234', '06 6982 1234'],
    ['ring me: 0151 23456789', '0151 23456789'],
    ['my mobile is 98765 43210', '98765 43210'],
    ['call 912 345 678', '912 345 678'],
    ['tel. 650-253-0000 ext 45', '650-253-0000 ext 45'],
    ['Phone: 6502530000', '6502530000'],
    ['fax 1-650-253-0000', '1-650-253-0000'],
  ])('%s', (text, phone) => expect(phones(text)).toEqual([phone]))

  it('tries the visitor locale first: a Norwegian number without a phone word is found for nb-NO only', () => {
    expect(phones('22 12 34 56', { locale: 'nb-NO' })).toEqual(['22 12 34 56'])
    expect(phones('22 12 34 56')).toEqual([])
    expect(phones('ring 22 12 34 56')).toEqual(['22 12 34 56'])
    // a number written with its trunk prefix in groups is taken whatever the locale (the shape rule)
    expect(phones('044 668 18 00')).toEqual(['044 668 18 00'])
  })

  it('region hints from a locale: its region first, a language alone by its main region, English and unknowns by the defaults', () => {
    expect(phoneRegions('fr-CA')[0]).toBe('CA')
    expect(phoneRegions('pt_BR')).toEqual(['BR', ...DEFAULT_PHONE_REGIONS.filter((r) => r !== 'BR')])
    expect(phoneRegions('de')[0]).toBe('DE')
    expect(phoneRegions('sv')[0]).toBe('SE')
    expect(phoneRegions('en')).toEqual([...DEFAULT_PHONE_REGIONS])
    expect(phoneRegions('xx-ZZ')).toEqual([...DEFAULT_PHONE_REGIONS])
    expect(phoneRegions(null)).toEqual([...DEFAULT_PHONE_REGIONS])
  })

  it.each([
    'order 123456789',
    'invoice 2024-000123',
    'my account 0612345678',
    'Kundennummer 12345678',
    'serial 4512 3378 9012',
    'price 1.299,00',
    'it was 1 299,00 €',
    '$1,299.99',
    'open 10:30-11:45',
    'host 192.168.0.1',
    'v2.3.4.5',
    'screen 1920 x 1080',
    'on 12/05/2024',
    'at 2024-01-05 14:30:22',
    'postcode 10115 Berlin',
    'we are at 17151 2450 Crown St',
    'lat 52.520008, lon 13.404954',
    'we had 1234567 visits',
    'ids 4567891 4567892',
    'population 67 390 000',
    "driver's license number is 2270-66-1551",
    'social security number is 853-37-1694',
    'ISBN 978-3-16-148410-0',
    'tracking number 9400 1000 0000 0000 0000 00',
  ])('leaves %j alone', (text) => expect(phones(text)).toEqual([]))

  it('a card number or an IBAN is that type only, never also a phone', () => {
    expect(types('card 4111 1111 1111 1111')).toEqual(['CARD:4111 1111 1111 1111'])
    expect(types('pay 4111111111111111 now')).toEqual(['CARD:4111111111111111'])
    expect(types('IBAN DE89 3704 0044 0532 0130 00')).toEqual(['IBAN:DE89 3704 0044 0532 0130 00'])
    expect(types('IBAN FR14 2004 1010 0505 0001 3M02 606, call 01 42 68 53 00')).toEqual(['IBAN:FR14 2004 1010 0505 0001 3M02 606', 'PHONE:01 42 68 53 00'])
  })

  it('finds numbers side by side and in a list', () => {
    expect(phones('tel 650-253-0000 650-253-0001')).toEqual(['650-253-0000', '650-253-0001'])
    expect(phones('Mobile: 0490 39 07 81 Desk: +447700 921 916 Fax: 345-899-3560x4587')).toEqual(['0490 39 07 81', '+447700 921 916', '345-899-3560x4587'])
  })

  it('past the work bound of a long text, numbers after a phone word or in international form are still redacted', () => {
    const text = `${'ref 4421 9981 '.repeat(800)}call me on 030 901820 or +44 7911 123456`
    expect(phones(text)).toEqual(['030 901820', '+44 7911 123456'])
  })
})

describe('extensionAt', () => {
  it('finds what /\\s*(?:x|ext\\.?|extension|#)\\s*\\d{1,6}$/i found, and reads a run of spaces once', async () => {
    const { extensionAt } = await import('./pii-phone.fns.js')
    let seed = 50
    const pick = (xs: string[]) => xs[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % xs.length]!
    for (let i = 0; i < 30_000; i++) {
      const s = Array.from({ length: seed % 9 }, () => pick(['x', 'X', 'ext', 'Ext.', 'extension', '#', ' ', '\t', '1', '2', 'a', '.'])).join('')
      expect(extensionAt(s), JSON.stringify(s)).toBe(/\s*(?:x|ext\.?|extension|#)\s*\d{1,6}$/i.exec(s)?.index ?? -1)
    }
    const t0 = performance.now()
    expect(extensionAt(`${'\t'.repeat(200_000)}\t0`)).toBe(-1)
    expect(performance.now() - t0).toBeLessThan(1000)
  })
})
