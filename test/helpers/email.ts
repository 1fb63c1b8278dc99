import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AppContext } from '../../src/context.js'
import { createEmailChannelRepo } from '../../src/modules/email-channel/email-channel.repo.js'
import { createEmailChannelService } from '../../src/modules/email-channel/email-channel.service.js'
import { startInboundSmtp } from '../../src/modules/email-channel/email-channel.smtp.js'

const DIR = join(import.meta.dirname, '..', 'fixtures', 'email')

export const newMessageId = (tag = 'm') => `<${tag}.${randomBytes(6).toString('hex')}@mail.example.test>`

/** A fixture of test/fixtures/email with its placeholders filled (To, From, Message-ID, thread headers). */
export function fixture(name: string, v: { to: string; from: string; messageId?: string; inReplyTo?: string; references?: string }): string {
  return readFileSync(join(DIR, name), 'utf8')
    .replaceAll('{{TO}}', v.to)
    .replaceAll('{{FROM}}', v.from)
    .replaceAll('{{MESSAGE_ID}}', v.messageId ?? newMessageId())
    .replaceAll('{{IN_REPLY_TO}}', v.inReplyTo ?? '')
    .replaceAll('{{REFERENCES}}', v.references ?? v.inReplyTo ?? '')
}

/** A small raw message with the headers given (loop-guard tests). */
export function rawMail(v: { to: string; from: string; subject?: string; body?: string; messageId?: string; headers?: Record<string, string> }): string {
  const lines = [
    `From: ${v.from}`,
    `To: ${v.to}`,
    `Subject: ${v.subject ?? 'How long do refunds take?'}`,
    `Message-ID: ${v.messageId ?? newMessageId()}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    ...Object.entries(v.headers ?? {}).map(([k, val]) => `${k}: ${val}`),
    '',
    v.body ?? 'How long do refunds take after you receive the returned item?',
    '',
  ]
  return lines.join('\r\n')
}

/** The reply_from confirmation link in a mail's text. */
export function confirmationLink(text: string): string {
  const m = /https?:\/\/\S+\/email\/verify-sender\?token=[A-Za-z0-9_%-]+/.exec(text)
  if (!m) throw new Error(`no confirmation link in: ${text.slice(0, 300)}`)
  return m[0]
}

/**
 * The inbound SMTP listener on a free port over a test app's database: the channel's own service, with the bot
 * lookup and the mailer it never uses on this path refused.
 */
export function inboundSmtp(ctx: AppContext, o: Omit<Parameters<typeof startInboundSmtp>[1], 'port' | 'host' | 'log'>) {
  const { db, clock, cipher, queue, config } = ctx
  const service = createEmailChannelService({
    db,
    clock,
    cipher,
    queue,
    repo: createEmailChannelRepo(db),
    config,
    bots: { get: () => Promise.reject(new Error('unused')) },
    email: { queue: () => Promise.reject(new Error('unused')) },
  })
  return startInboundSmtp(service, { port: 0, host: '127.0.0.1', log: { info: () => {}, warn: () => {} }, ...o })
}
