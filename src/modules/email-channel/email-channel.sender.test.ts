import { describe, expect, it } from 'vitest'
import { mailboxHash, senderOf, showSender } from './email-channel.fns.js'

const OURS = 'Support Bot <no-reply@service.test>'

describe('senderOf', () => {
  it('is EMAIL_FROM without a reply_from, or with one stored before issue 50 that is not one address', () => {
    expect(senderOf({ reply_from: null, reply_from_verified: null }, OURS)).toEqual({
      from: { name: 'Support Bot', address: 'no-reply@service.test' },
      verified: false,
    })
    expect(senderOf({ reply_from: 'a@x.test, b@y.test', reply_from_verified: 'a@x.test' }, OURS).from.address).toBe('no-reply@service.test')
  })
  it("is our address under reply_from's name until that address is confirmed", () => {
    const row = { reply_from: 'PayPal Security <service@paypal.test>', reply_from_verified: null }
    expect(senderOf(row, OURS)).toEqual({ from: { name: 'PayPal Security', address: 'no-reply@service.test' }, verified: false })
    // a confirmation of another address does not count
    expect(senderOf({ ...row, reply_from_verified: 'other@paypal.test' }, OURS).verified).toBe(false)
    expect(senderOf({ reply_from: 'support@acme.test', reply_from_verified: null }, OURS).from.name).toBe('Support Bot')
  })
  it('is reply_from once its address is confirmed', () => {
    const s = senderOf({ reply_from: 'Acme <Support@Acme.test>', reply_from_verified: 'support@acme.test' }, OURS)
    expect(s).toEqual({ from: { name: 'Acme', address: 'support@acme.test' }, verified: true })
    expect(showSender(s.from)).toBe('"Acme" <support@acme.test>')
    expect(showSender({ name: '', address: 'a@x.test' })).toBe('a@x.test')
  })
})

describe('mailboxHash', () => {
  it('is one key for the spellings of one mailbox, and keyed', () => {
    expect(mailboxHash('k', 'J.Doe+1@googlemail.com')).toBe(mailboxHash('k', 'jdoe@gmail.com'))
    expect(mailboxHash('k', 'j.doe@example.test')).not.toBe(mailboxHash('k', 'jdoe@example.test'))
    expect(mailboxHash('k', 'jdoe@gmail.com')).not.toBe(mailboxHash('other', 'jdoe@gmail.com'))
  })
})
