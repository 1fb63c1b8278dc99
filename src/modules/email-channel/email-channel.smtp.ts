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
  /** overrides of SMTP_LIMITS (tests) */
  limits?: Partial<typeof SMTP_LIMITS>
}

/**
 * What one client may hold (issue 50, finding 7): 201 idle connections from one address took every slot. A
 * session must say MAIL FROM within `idleMs` of connecting (or of its last message), and may send at most
 * `commandsOutsideMail` command lines outside a transaction (EHLO, STARTTLS, NOOP, RSET ... a real MTA needs a few).
 */
export const SMTP_LIMITS = { maxClients: 200, perAddress: 10, idleMs: 30_000, commandsOutsideMail: 20 }

type Connection = {
  session: SMTPServerSession
  send(code: number, message: string): void
  close(): void
  _onCommand?: (command: Buffer, done: () => void) => void
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
  const limits = { ...SMTP_LIMITS, ...o.limits }
  const perAddress = new Map<string, number>()
  /** per session: the deadline for MAIL FROM, and the command lines read outside a transaction */
  const guards = new Map<string, { timer: NodeJS.Timeout | null; lines: number; inMail: boolean; conn: Connection | null; address: string }>()

  function arm(id: string) {
    const g = guards.get(id)
    if (!g) return
    if (g.timer) clearTimeout(g.timer)
    g.inMail = false
    g.lines = 0
    const conn = g.conn
    if (!conn) return
    g.timer = setTimeout(() => hangUp(conn, 'Idle too long without MAIL FROM'), limits.idleMs)
    g.timer.unref()
  }
  function hangUp(conn: Connection, why: string) {
    try {
      conn.send(421, `${why}, closing connection`)
    } finally {
      conn.close()
    }
  }
  const server: SMTPServer = new SMTPServer({
    name: 'inbound',
    banner: 'support bot inbound mail',
    size: o.maxBytes,
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ? tls : {}),
    logger: false,
    maxClients: limits.maxClients,
    socketTimeout: 60_000,
    onConnect(session, cb) {
      const address = session.remoteAddress
      const n = perAddress.get(address) ?? 0
      if (n >= limits.perAddress) return cb(smtpError(421, 'Too many connections from your address, try again later'))
      perAddress.set(address, n + 1)
      const conn = [...(server.connections as Set<Connection>)].find((c) => c.session === session) ?? null
      guards.set(session.id, { timer: null, lines: 0, inMail: false, conn, address })
      arm(session.id)
      // commands outside a transaction: smtp-server has no hook per command, so its dispatcher is wrapped (it calls
      // the instance's _onCommand for every command line, before and after STARTTLS alike)
      if (conn?._onCommand) {
        const dispatch = conn._onCommand.bind(conn)
        conn._onCommand = (command: Buffer, done: () => void) => {
          const g = guards.get(session.id)
          if (g && !g.inMail && ++g.lines > limits.commandsOutsideMail) {
            hangUp(conn, 'Too many commands without a message')
            return done()
          }
          return dispatch(command, done)
        }
      }
      cb()
    },
    onClose(session) {
      const g = guards.get(session.id)
      if (!g) return
      if (g.timer) clearTimeout(g.timer)
      guards.delete(session.id)
      const n = (perAddress.get(g.address) ?? 1) - 1
      if (n <= 0) perAddress.delete(g.address)
      else perAddress.set(g.address, n)
    },
    onMailFrom(_address, session, cb) {
      const g = guards.get(session.id)
      if (g) {
        if (g.timer) clearTimeout(g.timer)
        g.timer = null
        g.inMail = true
      }
      cb()
    },
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
        // the transaction is over: the next one must start within the idle deadline again
        arm(session.id)
        if ((stream as { sizeExceeded?: boolean }).sizeExceeded || size > o.maxBytes) return cb(smtpError(552, `Message exceeds the ${o.maxBytes} byte limit`))
        const raw = Buffer.concat(chunks)
        chunks.length = 0
        const list = recipients.get(session) ?? []
        recipients.delete(session)
        // one recipient's bot may take the bytes (no copy); several share them
        Promise.all(list.map((c) => channel.receive(c, raw, { handOver: list.length === 1 }))).then(
          (results) => {
            // beyond the parse's limits: stored as too_complex, and a permanent refusal so the sender's MTA stops retrying
            if (results.some((r) => r.reason === 'too_complex')) return cb(smtpError(554, 'Message too complex to read (5.6.0)'))
            cb(null, 'Queued')
          },
          (err: unknown) => {
            if (err instanceof AppError && err.status === 422) return cb(smtpError(550, 'Not an e-mail message'))
            if (err instanceof AppError && err.status === 413) return cb(smtpError(552, `Message exceeds the ${o.maxBytes} byte limit`))
            if (err instanceof AppError && (err.status === 429 || err.status === 503))
              return cb(smtpError(451, 'Too much mail for this recipient now, try again later'))
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
