import { describe, expect, it } from 'vitest'
import { parseInbound } from '../src/modules/email-channel/email-channel.parse.js'
import { fixture } from './helpers/email.js'

const v = { to: 'bot-1@inbound.test', from: 'visitor@example.test' }

describe('inbound mail from real clients', () => {
  it('Gmail multipart/alternative, quoted-printable: the text part, the signature cut', async () => {
    const m = (await parseInbound(fixture('gmail-alternative.eml', v)))!
    expect(m.sender).toBe('visitor@example.test')
    expect(m.subject).toBe('How long do refunds take?')
    expect(m.question).toContain('How long do refunds take after you receive the returned item?')
    expect(m.question).toContain('back last week – thanks!')
  })
  it('Gmail reply: the quoted earlier mail is cut, the thread ids read', async () => {
    const m = (await parseInbound(fixture('gmail-reply.eml', { ...v, inReplyTo: '<r.1@inbound.test>', references: '<a@x> <r.1@inbound.test>' })))!
    expect(m.question).toBe('And how do I ship the parcel back to you?')
    expect(m.thread).toEqual(['<r.1@inbound.test>', '<a@x>'])
  })
  it('Outlook HTML only, windows-1252: turned into text', async () => {
    const m = (await parseInbound(fixture('outlook-html-only.eml', v)))!
    expect(m.question.replace(/\s+/g, ' ')).toContain('Where can I change my delivery address? I moved last week – the old one is wrong.')
    expect(m.question).not.toContain('<p')
    // Outlook's "From: / Sent:" block starts the quoted earlier mail
    expect(m.question).not.toContain('Your order has shipped')
  })
  it('Apple Mail base64: "Sent from my iPhone" and the quote cut', async () => {
    const m = (await parseInbound(fixture('apple-base64.eml', v)))!
    expect(m.question).toBe('Do you ship to Switzerland? And what does it cost?')
  })
  it('ISO-8859-1 quoted-printable, encoded words in the headers', async () => {
    const m = (await parseInbound(fixture('iso-8859-1.eml', v)))!
    expect(m.subject).toBe('Rückerstattung')
    expect(m.question).toContain('wie lange dauert die Rückerstattung? Grüße aus Köln.')
  })
  it('a forwarded message keeps the forwarded question', async () => {
    const m = (await parseInbound(fixture('forwarded.eml', v)))!
    expect(m.question).toContain('How long do refunds take for a returned parcel?')
  })
  it('attachments are listed, never read into the question', async () => {
    const m = (await parseInbound(fixture('with-attachment.eml', v)))!
    expect(m.attachments).toEqual([{ name: 'invoice-4711.pdf', type: 'application/pdf', size: expect.any(Number) }])
    expect(m.question).not.toContain('SECRET-INVOICE')
  })
  it('refuses what is not a message', async () => {
    expect(await parseInbound('just some words')).toBeNull()
    expect(await parseInbound('')).toBeNull()
  })
})
