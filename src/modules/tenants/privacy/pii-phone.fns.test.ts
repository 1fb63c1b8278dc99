import { describe, expect, it } from 'vitest'
import { detectPii } from './pii.fns.js'

const phones = (text: string) =>
  detectPii(text, {})
    .filter((e) => e.type === 'PHONE')
    .map((e) => text.slice(e.start, e.end))

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
