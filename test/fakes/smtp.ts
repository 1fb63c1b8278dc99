import { simpleParser, type ParsedMail } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  to: string[]
  from: string
  subject: string
  text: string
  replyTo?: string
  /** the SMTP envelope: MAIL FROM and every RCPT TO of the transaction */
  envelope: { from: string; to: string[] }
  raw: ParsedMail
}

/** A real SMTP server on 127.0.0.1 that keeps what it receives, for tests to read tokens from. */
export class FakeSmtp {
  readonly mails: ReceivedMail[] = []
  private readonly waiters: Array<() => void> = []
  private server: SMTPServer
  port = 0

  constructor() {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, cb) => {
        const env = session.envelope
        const envelope = {
          from: env.mailFrom ? env.mailFrom.address : '',
          to: env.rcptTo.map((r) => r.address),
        }
        simpleParser(stream)
          .then((m) => {
            const to = ([] as { value: { address?: string }[] }[]).concat((m.to as never) ?? []).flatMap((a) => a.value.map((v) => v.address ?? ''))
            this.mails.push({
              to,
              from: m.from?.value[0]?.address ?? '',
              subject: m.subject ?? '',
              text: m.text ?? '',
              replyTo: m.replyTo?.value[0]?.address,
              envelope,
              raw: m,
            })
            for (const w of this.waiters.splice(0)) w()
            cb()
          })
          .catch((err) => cb(err))
      },
    })
  }

  async start(): Promise<this> {
    // a client that goes away mid-session (a service process killed at a test's end with its pooled connection
    // open) is an ECONNRESET the server emits as 'error': without a listener that is an uncaught exception
    this.server.on('error', () => {})
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()))
    this.port = (this.server.server.address() as { port: number }).port
    return this
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`
  }

  /** Waits for a mail matching `pred` (default: any mail to `to`). */
  async waitFor(pred: (m: ReceivedMail) => boolean, timeoutMs = 30_000): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = this.mails.find(pred)
      if (found) return found
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no matching mail within ${timeoutMs} ms (have ${this.mails.length})`)
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200))
        this.waiters.push(() => {
          clearTimeout(t)
          resolve()
        })
      })
    }
  }

  to(address: string): ReceivedMail[] {
    return this.mails.filter((m) => m.to.includes(address))
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/** The one-time token in a verification or reset mail. */
export const tokenFromMail = (m: ReceivedMail): string => {
  const match = /token=([A-Za-z0-9_\-%]+)/.exec(m.text)
  if (!match) throw new Error(`no token in mail: ${m.subject}`)
  return decodeURIComponent(match[1]!)
}
