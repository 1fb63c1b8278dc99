import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { MailReply, MailTask } from './email-channel.parse-worker.js'
import type { InboundMail, ParseStage } from './email-channel.mime.js'

export type { InboundMail } from './email-channel.mime.js'

/**
 * A mail that needed more than the parse's time or memory (its worker was ended and replaced), or that found every
 * parse slot busy: stored as `too_complex` (or refused for now), never a crash (issue 50, findings 1 and 2).
 */
export class MailTooComplex extends Error {
  override name = 'MailTooComplex'
  constructor(
    message: string,
    /** true: the parser is busy, a retry later may pass (SMTP 451 / HTTP 503); false: this mail is the problem */
    readonly busy = false,
  ) {
    super(message)
  }
}

/**
 * The bounds of one parse. The deadline is far above an ordinary mail's parse (a 10 MB text mail takes under a
 * second on a quiet machine) because a mail over it is refused for good (SMTP 554): at 8 s a 9.9 MB mail missed it
 * on a machine at load 30. It holds only a worker, never the event loop. The memory limit is per worker, apart
 * from the server's heap.
 */
export const MAIL_PARSE = { workers: 2, deadlineMs: 30_000, maxMemoryMb: 256, maxQueued: 256, maxQueuedBytes: 64 * 1024 * 1024, idleMs: 30_000 }

/** What one parse gives: the mail (null: not a message) and, when asked for, its stored form. */
export interface ParseResult {
  mail: InboundMail | null
  sealed: string | null
}

interface Pending {
  task: MailTask
  resolve: (r: ParseResult) => void
  reject: (e: Error) => void
  timer?: NodeJS.Timeout
}
interface Slot {
  worker: Worker
  ready: boolean
  task: Pending | null
  idle?: NodeJS.Timeout
}

/** The worker entry beside this file: under tsx/vitest a bootstrap that loads the .ts source, else the built .js. */
const entry = (): URL =>
  fileURLToPath(import.meta.url).endsWith('.ts')
    ? new URL('./email-channel.parse-worker-boot.mjs', import.meta.url)
    : new URL('./email-channel.parse-worker.js', import.meta.url)

/**
 * mailparser and the reply cutter in worker threads (as documents' parsers run, documents/parsers/pool.ts): a mail
 * that hangs the parse or exhausts its heap costs only its worker, which is terminated at the deadline (or dies at
 * its memory limit) and replaced. The queue is bounded: beyond it a mail is refused for now, not held in memory.
 */
function createMailParser() {
  const slots: Slot[] = []
  const queue: Pending[] = []
  let nextId = 1

  function spawn(): Slot {
    const worker = new Worker(entry(), { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: MAIL_PARSE.maxMemoryMb }, stdout: false, stderr: false })
    worker.unref()
    const slot: Slot = { worker, ready: false, task: null }
    worker.on('message', (m: MailReply | { ready: true }) => {
      if ('ready' in m) {
        slot.ready = true
        if (slot.task) startClock(slot, slot.task)
        return
      }
      const t = slot.task
      if (!t || t.task.id !== m.id) return
      if (t.timer) clearTimeout(t.timer)
      slot.task = null
      if (m.ok) t.resolve({ mail: m.mail, sealed: m.sealed })
      else t.reject(new MailTooComplex(`The mail could not be read: ${m.message}`))
      idle(slot)
      pump()
    })
    const died = (why: string) => {
      const i = slots.indexOf(slot)
      if (i >= 0) slots.splice(i, 1)
      const t = slot.task
      slot.task = null
      if (t) {
        if (t.timer) clearTimeout(t.timer)
        t.reject(new MailTooComplex(why))
      }
      pump()
    }
    worker.on('error', (err) =>
      died((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'The mail is too complex to read (memory limit)' : 'The mail could not be read'),
    )
    worker.on('exit', () => died('The mail could not be read (the reader stopped)'))
    slots.push(slot)
    return slot
  }

  function idle(slot: Slot) {
    if (slot.idle) clearTimeout(slot.idle)
    slot.idle = setTimeout(() => {
      if (slot.task) return
      const i = slots.indexOf(slot)
      if (i >= 0) slots.splice(i, 1)
      void slot.worker.terminate()
    }, MAIL_PARSE.idleMs)
    slot.idle.unref()
  }

  function startClock(slot: Slot, t: Pending) {
    t.timer = setTimeout(() => {
      if (slot.task !== t) return
      slot.task = null
      const i = slots.indexOf(slot)
      if (i >= 0) slots.splice(i, 1)
      void slot.worker.terminate()
      t.reject(new MailTooComplex(`The mail took too long to read (more than ${MAIL_PARSE.deadlineMs / 1000} s)`))
      pump()
    }, MAIL_PARSE.deadlineMs)
    t.timer.unref()
  }

  function pump() {
    while (queue.length) {
      let slot = slots.find((s) => s.task === null)
      if (!slot && slots.length < MAIL_PARSE.workers) slot = spawn()
      if (!slot) return
      const t = queue.shift()!
      if (slot.idle) clearTimeout(slot.idle)
      slot.task = t
      if (slot.ready) startClock(slot, t)
      slot.worker.postMessage(t.task, t.task.raw ? [t.task.raw.buffer as ArrayBuffer] : [])
    }
  }

  const size = (t: MailTask) => t.raw?.byteLength ?? t.sealed?.length ?? 0
  return (task: Omit<MailTask, 'id'>, handOver = false): Promise<ParseResult> => {
    // bounded by count and by bytes: a few big mails waiting must not refuse the small ones behind them (bench:email
    // refused 56 of 150 ordinary mails when the bound was 64 mails of any size), nor hold gigabytes
    const bytes = queue.reduce((n, t) => n + size(t.task), 0)
    if (queue.length >= MAIL_PARSE.maxQueued || bytes + size(task as MailTask) > MAIL_PARSE.maxQueuedBytes)
      return Promise.reject(new MailTooComplex('Too many mails being read; try again later', true))
    // a private copy handed over (transferred) to the worker, so the caller's buffer stays whole; or, when the caller
    // hands its bytes over and they fill an ArrayBuffer of their own (never a pooled one), those very bytes
    const whole = (b: Uint8Array) => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.byteLength > 64 * 1024
    const own = task.raw ? { ...task, raw: handOver && whole(task.raw) ? task.raw : new Uint8Array(task.raw) } : task
    return new Promise((resolve, reject) => {
      queue.push({ task: { ...own, id: nextId++ }, resolve, reject })
      pump()
    })
  }
}

let shared: ReturnType<typeof createMailParser> | null = null

/**
 * One raw mail parsed off the event loop, under MAIL_PARSE's deadline and memory limit. `headers` reads only the
 * header block (64 KB at most): the door's loop guard and channel_disabled run on it before any body is parsed.
 * Rejects with MailTooComplex; resolves null for what is not a message.
 */
export async function parseInbound(raw: Buffer | string, stage: ParseStage = 'full'): Promise<InboundMail | null> {
  shared ??= createMailParser()
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw
  return (await shared({ stage, raw: stage === 'headers' ? bytes.subarray(0, 64 * 1024) : bytes })).mail
}

/**
 * The whole mail parsed, and its stored form made in the same worker (deflated and sealed under `hexKey`,
 * email-channel.raw.fns.ts): nothing of the mail's size is encoded or encrypted on the event loop. With `handOver`
 * the caller gives up `raw` (it is detached when it fills its own ArrayBuffer): not even copied.
 */
export function parseAndSeal(raw: Buffer, hexKey: string, o: { handOver?: boolean } = {}): Promise<ParseResult> {
  shared ??= createMailParser()
  return shared({ stage: 'full', raw, key: hexKey, seal: true }, o.handOver)
}

/** A stored mail (its row's `raw_enc`) opened and parsed in the worker, as parseInbound parses a raw one. */
export async function parseStored(sealed: string, hexKey: string, stage: ParseStage = 'full'): Promise<InboundMail | null> {
  shared ??= createMailParser()
  return (await shared({ stage, sealed, key: hexKey })).mail
}
