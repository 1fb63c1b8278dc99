/**
 * bench:email's hostile sender (BENCH_HOSTILE=1), in a process of its own: building and uploading a 10 MB mail is
 * the client's work, and in the service's process it would be counted as the service's stall. Posts one hostile mail
 * a second to HOOK (addressed to TO) until stdin closes, then prints its outcomes as one JSON line.
 */
import { randomBytes } from 'node:crypto'
import { rawMail as mail } from './support.js'

/** The hostile shapes of issue 50 (their bodies built once; the headers, with a fresh Message-ID, per mail). */
const HOSTILE_SHAPES: { subject: string; body: string; headers?: string }[] = [
  { subject: 'on at', body: `Question?\n${' on at'.repeat(2000)}` },
  { subject: 'blank lines', body: `${'\n'.repeat(10_000)}How long do refunds take?` },
  { subject: '6 MB', body: `How long do refunds take?\n${'lorem ipsum dolor sit amet\n'.repeat((6 * 1024 * 1024) / 27)}` },
  { subject: '9.9 MB', body: `How long do refunds take?\n${'x'.repeat(99)}\n`.repeat(Math.floor((9.9 * 1024 * 1024) / 126)) },
  { subject: 'NUL \u0000 subject', body: 'How long \u0000 do refunds take?' },
  { subject: 'list', body: 'Refunds?', headers: `Reply-To: <${Array.from({ length: 30 }, (_, k) => `v${k}@victims.test`).join(',')}>` },
]
const bodies = HOSTILE_SHAPES.map((s) => new TextEncoder().encode(`${s.body}\r\n`))

function hostileMail(i: number, to: string): Blob {
  const shape = HOSTILE_SHAPES[i % HOSTILE_SHAPES.length]!
  const id = `<h${i}.${randomBytes(4).toString('hex')}@mail.example.test>`
  const head = mail({ to, from: `hostile-${i}@example.test`, id, subject: shape.subject, body: '' }).split('\r\n\r\n')[0]!
  return new Blob([`${head}${shape.headers ? `\r\n${shape.headers}` : ''}\r\n\r\n`, bodies[i % HOSTILE_SHAPES.length]!])
}

const hook = process.env.HOOK!
const to = process.env.TO!
let posting = true
process.stdin.on('end', () => {
  posting = false
})
process.stdin.resume()
const statuses: Record<string, number> = {}
/** BENCH_LOOP_LOG=1: each post's shape and its start and end, in ms since the epoch (stderr), to match the service's stalls */
const log = process.env.BENCH_LOOP_LOG === '1'

let sent = 0
const posts: Promise<void>[] = []
// fired at a steady 1/s without waiting for the previous one (a big mail's upload takes longer than a second)
for (let i = 0; posting; i++) {
  const at = Date.now()
  posts.push(
    (async () => {
      const t0 = Date.now()
      const r = await fetch(hook, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: hostileMail(i, to) })
      const b = (await r.json()) as { status?: string; reason?: string; detail?: unknown }
      const key = `${r.status} ${b.status ?? JSON.stringify(b.detail).slice(0, 60)}${b.reason ? `/${b.reason}` : ''}`
      statuses[key] = (statuses[key] ?? 0) + 1
      if (r.status === 202 && b.status !== 'duplicate') sent++
      if (log) process.stderr.write(`post ${HOSTILE_SHAPES[i % HOSTILE_SHAPES.length]!.subject.replace(/\0/g, '')}: ${t0} to ${Date.now()}\n`)
    })(),
  )
  await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - at))))
}
await Promise.all(posts)
process.stdout.write(`${JSON.stringify({ sent, statuses })}\n`)
