import { describe, expect, it } from 'vitest'
import { addressOf, isPlainAddress, mailboxOf, nameOf, parseReplyFrom } from './address.fns.js'

describe('isPlainAddress', () => {
  it('takes one plain address', () => {
    for (const a of ['a@b.test', 'root@localhost', 'first.last+tag@mail.example.test', 'ü@bücher.test']) expect(isPlainAddress(a), a).toBe(true)
  })
  it('refuses lists, quoting, spaces, hidden characters and the over-long', () => {
    const bad = [
      'v1@victims.test,v2@victims.test',
      'v1@victims.test;v2@victims.test',
      '"a1@v,a2@v;a3@v"@evil.test',
      'a b@c.test',
      '<a@b.test>',
      'a@@b.test',
      '@b.test',
      'a@',
      'a\\@b.test',
      'a@b.test\u202e',
      'a\u200b@b.test',
      'a\r\n@b.test',
      `${'a'.repeat(250)}@b.test`,
      '',
      null,
    ]
    for (const a of bad) expect(isPlainAddress(a), String(a)).toBe(false)
  })
})

describe('parseReplyFrom', () => {
  it('takes a name and an address, or an address alone', () => {
    expect(parseReplyFrom('Acme Support <Support@Acme.test>')).toEqual({ name: 'Acme Support', address: 'support@acme.test' })
    expect(parseReplyFrom('"Acme Support" <support@acme.test>')).toEqual({ name: 'Acme Support', address: 'support@acme.test' })
    expect(parseReplyFrom('support@acme.test')).toEqual({ name: null, address: 'support@acme.test' })
    expect(parseReplyFrom('<support@acme.test>')).toEqual({ name: null, address: 'support@acme.test' })
  })
  it.each([
    ['a@x.test, b@y.test', 'list'],
    ['Acme <a@x.test>, Other <b@y.test>', 'list'],
    ['Acme <a@x.test,b@y.test>', 'list'],
    ['Support, Sales <a@x.test>', 'list'],
    ['PayPal \u202eSecurity <a@x.test>', 'hidden_character'],
    ['Pay\u2066Pal <a@x.test>', 'hidden_character'],
    ['Pay\u200bPal <a@x.test>', 'hidden_character'],
    ['Pay\u0007Pal <a@x.test>', 'hidden_character'],
    ['Acme\r\nBcc: x@y.test <a@x.test>', 'hidden_character'],
    ['service@paypal.com <a@x.test>', 'name_looks_like_address'],
    [`${'n'.repeat(101)} <a@x.test>`, 'name_too_long'],
    ['not an address', 'not_one_address'],
    ['Acme <"a b"@x.test>', 'not_one_address'],
    ['Ac<me <a@x.test>', 'not_one_address'],
  ])('refuses %j (%s)', (raw, problem) => {
    expect(parseReplyFrom(raw)).toEqual({ problem })
  })
})

describe('mailboxOf', () => {
  it('folds case, +tags and Gmail dots', () => {
    expect(mailboxOf('Storm+1@Example.test')).toBe('storm@example.test')
    expect(mailboxOf('s.t.o.r.m+x@googlemail.com')).toBe('storm@gmail.com')
    expect(mailboxOf('storm@gmail.com')).toBe('storm@gmail.com')
    // dots matter elsewhere
    expect(mailboxOf('s.torm@example.test')).toBe('s.torm@example.test')
  })
})

describe('EMAIL_FROM parts', () => {
  it('splits a name and an address', () => {
    expect(addressOf('Support Bot <no-reply@localhost>')).toBe('no-reply@localhost')
    expect(addressOf('bot@x.test')).toBe('bot@x.test')
    expect(nameOf('"Support Bot" <no-reply@localhost>')).toBe('Support Bot')
    expect(nameOf('bot@x.test')).toBeNull()
  })
})
