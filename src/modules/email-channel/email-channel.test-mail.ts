import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * The bot page's "Send a test mail" (issue 52, item 11): a mail the service writes itself, from the signed-in
 * member to the bot, that goes through the same door and the same turn as a customer's, answered and cited in the
 * member's inbox, but opens no conversation and no ticket (the turn runs as a dry run, as an evaluation's does).
 * It is known by its Message-ID, which carries a keyed tag only the service can make: a mail from outside that
 * copies the shape is an ordinary mail.
 */

const key = (secret: string) => createHmac('sha256', 'email-test-mail').update(secret).digest()
const tagOf = (secret: string, nonce: string) => createHmac('sha256', key(secret)).update(nonce).digest('hex').slice(0, 24)

/** A test mail's Message-ID: `<test.<nonce>.<tag>@<domain>>`. */
export function testMessageId(secret: string, domain: string): string {
  const nonce = randomBytes(9).toString('hex')
  return `<test.${nonce}.${tagOf(secret, nonce)}@${domain}>`
}

/** Whether a Message-ID is one of ours for a test mail (its tag checks out). */
export function isTestMail(secret: string, messageId: string | null | undefined): boolean {
  const m = /^<test\.([0-9a-f]{18})\.([0-9a-f]{24})@[^<>\s]+>$/.exec(messageId ?? '')
  if (!m) return false
  const want = Buffer.from(tagOf(secret, m[1]!))
  const got = Buffer.from(m[2]!)
  return want.length === got.length && timingSafeEqual(want, got)
}

/** A header value in UTF-8 (RFC 2047), so a question in any language survives as the subject. */
const encodedWord = (text: string) => `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`

/** The raw test mail: the question as its subject (as a customer writes one) and as its body. */
export function testMailRaw(p: { from: string; to: string; question: string; messageId: string; date: Date }): Buffer {
  const subject = p.question.split('\n')[0]!.trim().slice(0, 120)
  return Buffer.from(
    [
      `From: ${p.from}`,
      `To: ${p.to}`,
      `Subject: ${encodedWord(subject)}`,
      `Message-ID: ${p.messageId}`,
      `Date: ${p.date.toUTCString()}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from(p.question.replace(/\r?\n/g, '\r\n'), 'utf8').toString('base64').replace(/.{76}/g, '$&\r\n'),
      '',
    ].join('\r\n'),
    'utf8',
  )
}
