import { readFileSync } from 'node:fs'
import type { Logger } from 'pino'
import { SMTPServer, type SMTPServerSession } from 'smtp-server'
import { AppError } from '../../lib/errors.js'
import type { EmailChannelService } from './email-channel.service.js'

type Channel = NonNullable<Awaited<ReturnType<EmailChannelService['byAddress']>>>

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code })

export interface InboundSmtpOptions {
  port: number
  host: string
  maxBytes: number
  tlsCert?: string
  tlsKey?: string
  log: Pick<Logger, 'info' | 'warn'>
}

/**
 * The inbound SMTP listener (smtp-server; the protocol is not ours to write): mail to a bot's address
 * `<local>@INBOUND_EMAIL_DOMAIN` goes the webhook's way (recorded once, queued). An unknown recipient is refused
 * at RCPT (550); the size limit is announced in EHLO (SIZE) and enforced while the data streams (552);
 * STARTTLS is offered when a certificate is configured. No AUTH: it is an MX, not a relay.
 */
export async function startInboundSmtp(
  channel: Pick<EmailChannelService, 'byAddress' | 'receive'>,
  o: InboundSmtpOptions,
): Promise<{ port: number; close(): Promise<void> }> {
  const tls = o.tlsCert && o.tlsKey ? { cert: readFileSync(o.tlsCert), key: readFileSync(o.tlsKey) } : null
  const recipients = new WeakMap<SMTPServerSession, Channel[]>()
  const server = new SMTPServer({
    name: 'inbound',
    banner: 'support bot inbound mail',
    size: o.maxBytes,
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ? tls : {}),
    logger: false,
    maxClients: 200,
    socketTimeout: 60_000,
    onRcptTo(address, session, cb) {
      channel.byAddress(address.address).then(
        (found) => {
          if (!found) return cb(smtpError(550, `No such recipient here: ${address.address.slice(0, 100)}`))
          const list = recipients.get(session) ?? []
          if (list.length >= 20) return cb(smtpError(452, 'Too many recipients'))
          if (!list.some((c) => c.bot_id === found.bot_id)) list.push(found)
          recipients.set(session, list)
          cb()
        },
        () => cb(smtpError(451, 'Temporary failure, try again later')),
      )
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = []
      let size = 0
      stream.on('data', (c: Buffer) => {
        size += c.length
        if (size <= o.maxBytes) chunks.push(c)
      })
      stream.on('end', () => {
        if ((stream as { sizeExceeded?: boolean }).sizeExceeded || size > o.maxBytes) return cb(smtpError(552, `Message exceeds the ${o.maxBytes} byte limit`))
        const raw = Buffer.concat(chunks)
        const list = recipients.get(session) ?? []
        recipients.delete(session)
        Promise.all(list.map((c) => channel.receive(c, raw))).then(
          () => cb(null, 'Queued'),
          (err: unknown) => {
            if (err instanceof AppError && err.status === 422) return cb(smtpError(550, 'Not an e-mail message'))
            if (err instanceof AppError && err.status === 413) return cb(smtpError(552, `Message exceeds the ${o.maxBytes} byte limit`))
            o.log.warn({ err: { message: (err as Error)?.message } }, 'inbound smtp: message not taken')
            cb(smtpError(451, 'Temporary failure, try again later'))
          },
        )
      })
    },
  })
  server.on('error', (err) => o.log.warn({ err: { message: err.message } }, 'inbound smtp error'))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port, o.host, () => resolve())
  })
  const port = (server.server.address() as { port: number }).port
  o.log.info({ port, starttls: Boolean(tls) }, 'inbound smtp listening')
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}
