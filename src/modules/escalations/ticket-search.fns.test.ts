import { describe, expect, it } from 'vitest'
import { searchedEmail, ticketSearch } from './ticket-search.fns.js'

describe('ticketSearch', () => {
  it('makes a prefix query of the words and keeps no tsquery operator', () => {
    expect(ticketSearch('Refund late!')).toEqual({ number: null, tsquery: 'refund:* & late:*' })
    expect(ticketSearch("a & b | !c <-> d:* 'e'")).toEqual({ number: null, tsquery: 'a:* & b:* & c:* & d:* & e:*' })
    expect(ticketSearch('Rückerstattung  verspätet')).toEqual({ number: null, tsquery: 'rückerstattung:* & verspätet:*' })
  })
  it('recognises a ticket number and still searches its words', () => {
    expect(ticketSearch(' tkt-42 ')).toEqual({ number: 'TKT-42', tsquery: 'tkt:* & 42:*' })
  })
  it('bounds the terms and answers null when nothing is left', () => {
    expect(ticketSearch('!!! ---')).toEqual({ number: null, tsquery: null })
    expect(ticketSearch('a b c d e f g h i j').tsquery!.split(' & ')).toHaveLength(8)
    expect(ticketSearch('x'.repeat(300)).tsquery).toBe(`${'x'.repeat(64)}:*`)
  })
})

describe('searchedEmail', () => {
  it('takes one address, trimmed, and nothing else', () => {
    expect(searchedEmail('  Someone@Example.com ')).toBe('Someone@Example.com')
    expect(searchedEmail('someone@example')).toBeNull()
    expect(searchedEmail('mail someone@example.com')).toBeNull()
    expect(searchedEmail('refund')).toBeNull()
  })
})
