import { describe, expect, it } from 'vitest'
import { bareAddress, loopReason, renderReply, replyReferences, replySubject, threadIds, type HeaderLine } from './email-channel.fns.js'

const h = (raw: Record<string, string>): HeaderLine[] => Object.entries(raw).map(([k, v]) => ({ key: k.toLowerCase(), line: `${k}: ${v}` }))
const own = ['bot-1@inbound.test', 'support@acme.test']

describe('loopReason', () => {
  it('lets a person through, including Auto-Submitted: no', () => {
    expect(loopReason(h({ From: 'a@b.test' }), 'a@b.test', own)).toBeNull()
    expect(loopReason(h({ 'Auto-Submitted': 'no' }), 'a@b.test', own)).toBeNull()
    expect(loopReason(h({ 'Return-Path': '<a@b.test>' }), 'a@b.test', own)).toBeNull()
  })
  it.each([
    [{ 'Auto-Submitted': 'auto-replied' }, 'auto_submitted'],
    [{ 'Auto-Submitted': 'auto-generated; owner-email=x@y' }, 'auto_submitted'],
    [{ 'X-Autoreply': 'yes' }, 'auto_reply_header'],
    [{ 'X-Autorespond': 'Out of office' }, 'auto_reply_header'],
    [{ Precedence: 'bulk' }, 'precedence'],
    [{ Precedence: 'junk' }, 'precedence'],
    [{ Precedence: 'list' }, 'precedence'],
    [{ 'List-Id': '<news.acme.test>' }, 'mailing_list'],
    [{ 'Return-Path': '<>' }, 'empty_return_path'],
  ])('ignores %o', (headers, reason) => {
    expect(loopReason(h(headers), 'a@b.test', own)).toBe(reason)
  })
  it('ignores daemons, no-reply senders and our own addresses', () => {
    for (const s of ['mailer-daemon@x.test', 'MAILER-DAEMON@x.test', 'postmaster@x.test', 'no-reply@x.test', 'noreply@x.test']) {
      expect(loopReason([], s.toLowerCase(), own)).toBe('daemon_sender')
    }
    expect(loopReason([], 'support@acme.test', own)).toBe('own_address')
    expect(loopReason([], null, own)).toBe('no_sender')
  })
})

describe('threading', () => {
  it('adds Re: once', () => {
    expect(replySubject('Refund')).toBe('Re: Refund')
    expect(replySubject('Re: Refund')).toBe('Re: Refund')
    expect(replySubject('AW: Rückgabe')).toBe('AW: Rückgabe')
    expect(replySubject('')).toBe('Re: your message')
  })
  it('builds References from the thread and the answered id', () => {
    expect(replyReferences(['<a@x>', '<b@x>'], '<c@x>')).toEqual(['<a@x>', '<b@x>', '<c@x>'])
    expect(
      replyReferences(
        Array.from({ length: 30 }, (_, i) => `<${i}@x>`),
        '<z@x>',
      ),
    ).toHaveLength(20)
  })
  it('reads the thread ids newest first', () => {
    expect(threadIds('<c@x>', ['<a@x>', '<b@x>'])).toEqual(['<c@x>', '<b@x>', '<a@x>'])
    expect(threadIds(null, '<a@x> <b@x>')).toEqual(['<b@x>', '<a@x>'])
    expect(threadIds('junk', null)).toEqual([])
  })
  it('reads bare addresses', () => {
    expect(bareAddress('Acme Support <Support@Acme.test>')).toBe('support@acme.test')
    expect(bareAddress('x@y.test')).toBe('x@y.test')
    expect(bareAddress('nobody')).toBeNull()
  })
})

describe('renderReply', () => {
  it('numbers the cited pages under the answer, then the signature', () => {
    const r = renderReply({
      text: 'Refunds take 5 days [1].',
      sources: [
        { title: 'Refunds', url: 'https://acme.test/refunds' },
        { title: 'no link', url: '' },
      ],
      signature: 'Acme <b>Support</b>',
    })
    expect(r.text).toBe('Refunds take 5 days [1].\n\nSources:\n[1] Refunds: https://acme.test/refunds\n\n-- \nAcme <b>Support</b>')
    expect(r.html).toContain('<ol><li><a href="https://acme.test/refunds">Refunds</a></li></ol>')
    expect(r.html).toContain('Acme &lt;b&gt;Support&lt;/b&gt;')
  })

  it('names an uploaded document without a page by its title; the footer goes before the "-- " signature (issue 52)', () => {
    const r = renderReply({
      text: 'Refunds take 5 days [1][2].',
      sources: [
        { title: 'Refund policy', url: null },
        { title: 'Refunds', url: 'https://acme.test/refunds' },
        { title: 'Refund policy', url: null },
      ],
      signature: 'The Acme team',
      footer: 'Reply "human" to reach a person.',
    })
    expect(r.text).toBe(
      'Refunds take 5 days [1][2].\n\nSources:\n[1] Refund policy\n[2] Refunds: https://acme.test/refunds\n\nReply "human" to reach a person.\n\n-- \nThe Acme team',
    )
    expect(r.html.indexOf('reach a person')).toBeLessThan(r.html.indexOf('-- <br>'))
    expect(r.html).toContain('<li>Refund policy</li>')
  })
})
