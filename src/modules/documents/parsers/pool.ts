import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { DocumentFileType } from '../../../db/schema/ingestion.js'
import type { HealthStatus } from '../../../db/schema/ingestion.js'
import type { Chunk, ChunkOptions } from '../chunking.fns.js'
import { ParseFailure, UnsupportedFile } from './errors.js'
import type { ParsedUpload, ParseLimits } from './parse.js'
import type { WorkerReply, WorkerTask } from './parse-worker.js'
import type { ExtractedPage } from './html-extract.js'

/** A parser library threw something unexpected: still a 422 for the user, but counted apart in benches. */
export class ParserCrash extends ParseFailure {
  override name = 'ParserCrash'
  constructor(
    message: string,
    readonly detail: string,
  ) {
    super(message)
  }
}

/** The file took longer than the budget or needed more memory than allowed; its worker was replaced. */
export class ParserTimeout extends ParseFailure {
  override name = 'ParserTimeout'
}

export interface ParserPoolOptions {
  size: number
  timeoutMs: number
  maxMemoryMb: number
  limits: ParseLimits
}

export interface ParserPool {
  parse(filename: string, bytes: Uint8Array): Promise<ParsedUpload>
  /** Chunks and health check of a text, computed together off the event loop. */
  chunk(
    doc: { text: string; fileType: DocumentFileType; sourceUrl: string | null },
    options: ChunkOptions,
    now: Date,
  ): Promise<{ chunks: Chunk[]; health: HealthStatus }>
  /** A crawled HTML page's main content, title and links (the crawler's extraction, off the event loop). */
  extractHtml(html: string, url: string): Promise<ExtractedPage>
  close(): Promise<void>
}

type NoId<T> = T extends unknown ? Omit<T, 'id'> : never

interface Slot {
  worker: Worker
  task: Pending | null
  ready: boolean
  idleTimer?: NodeJS.Timeout
}

/** A worker that has not loaded its parsers after this long is considered broken. */
const BOOT_TIMEOUT_MS = 30_000

/** An idle worker is ended after this long; the next file starts a fresh one (~0.3 s). */
const IDLE_MS = 60_000

interface Pending {
  msg: WorkerTask
  transfer: ArrayBuffer[]
  resolve: (v: unknown) => void
  reject: (e: Error) => void
  timer?: NodeJS.Timeout
}

/** The worker entry beside this file: under tsx/vitest a bootstrap that loads the .ts source, else the built .js. */
function workerEntry(): URL {
  return fileURLToPath(import.meta.url).endsWith('.ts') ? new URL('./parse-worker-boot.mjs', import.meta.url) : new URL('./parse-worker.js', import.meta.url)
}

/**
 * Parsing and chunking run in worker threads so a 20 MB PDF does not stall the HTTP server, and so a
 * file that hangs a parser or exhausts its heap costs only that worker: it is terminated after the time
 * budget (or dies at its memory limit) and replaced, and the upload gets a clean 422.
 */
export function createParserPool(opts: ParserPoolOptions): ParserPool {
  const slots: Slot[] = []
  const queue: Pending[] = []
  let nextId = 1
  const entry = workerEntry()

  function spawn(): Slot {
    const worker = new Worker(entry, {
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: opts.maxMemoryMb },
      stdout: false,
      stderr: false,
    })
    worker.unref()
    const slot: Slot = { worker, task: null, ready: false }
    const boot = setTimeout(() => {
      if (!slot.ready) void worker.terminate()
    }, BOOT_TIMEOUT_MS)
    boot.unref()
    worker.on('message', (reply: WorkerReply | { ready: true }) => {
      if ('ready' in reply) {
        slot.ready = true
        clearTimeout(boot)
        if (slot.task) startClock(slot, slot.task)
        return
      }
      const t = slot.task
      if (!t || t.msg.id !== reply.id) return
      finish(slot)
      if (reply.ok) t.resolve(reply.value)
      else if (reply.kind === 'unsupported') t.reject(new UnsupportedFile(reply.message))
      else if (reply.kind === 'parse') t.reject(new ParseFailure(reply.message))
      else t.reject(new ParserCrash('The file could not be read (damaged or unsupported content)', reply.message))
    })
    const died = (why: string) => {
      const t = slot.task
      slot.task = null
      remove(slot)
      if (t) {
        if (t.timer) clearTimeout(t.timer)
        t.reject(new ParserTimeout(why))
      }
      pump()
    }
    worker.on('error', (err) =>
      died(
        (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? 'The file is too complex to read (memory limit reached)'
          : 'The file could not be read (the reader failed)',
      ),
    )
    worker.on('exit', () => died('The file could not be read (the reader stopped)'))
    slots.push(slot)
    return slot
  }

  function remove(slot: Slot) {
    const i = slots.indexOf(slot)
    if (i >= 0) slots.splice(i, 1)
  }

  function finish(slot: Slot) {
    if (slot.task?.timer) clearTimeout(slot.task.timer)
    slot.task = null
    pump()
    if (slot.task === null && slots.includes(slot)) {
      slot.idleTimer = setTimeout(() => {
        if (slot.task !== null) return
        remove(slot)
        void slot.worker.terminate()
      }, IDLE_MS)
      slot.idleTimer.unref()
    }
  }

  function pump() {
    while (queue.length) {
      let slot = slots.find((s) => s.task === null)
      if (!slot && slots.length < opts.size) slot = spawn()
      if (!slot) return
      const t = queue.shift()!
      if (slot.idleTimer) clearTimeout(slot.idleTimer)
      slot.task = t
      if (slot.ready) startClock(slot, t)
      slot.worker.postMessage(t.msg, t.transfer)
    }
  }

  function startClock(s: Slot, t: Pending) {
    t.timer = setTimeout(() => {
      if (s.task !== t) return
      s.task = null
      remove(s)
      void s.worker.terminate()
      t.reject(new ParserTimeout(`The file took too long to read (more than ${Math.round(opts.timeoutMs / 1000)} s)`))
      pump()
    }, opts.timeoutMs)
  }

  function run<T>(msg: NoId<WorkerTask>, transfer: ArrayBuffer[] = []): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ msg: { ...msg, id: nextId++ } as WorkerTask, transfer, resolve: resolve as (v: unknown) => void, reject })
      pump()
    })
  }

  return {
    parse(filename, bytes) {
      const copy = new Uint8Array(bytes) // a private copy we can hand over without detaching the caller's buffer
      return run<ParsedUpload>({ op: 'parse', filename, bytes: copy, limits: opts.limits }, [copy.buffer as ArrayBuffer])
    },
    chunk(doc, options, now) {
      return run<{ chunks: Chunk[]; health: HealthStatus }>({
        op: 'chunk',
        text: doc.text,
        fileType: doc.fileType,
        sourceUrl: doc.sourceUrl,
        options,
        now: now.toISOString(),
      })
    },
    extractHtml(html, url) {
      return run<ExtractedPage>({ op: 'html', html, url })
    },
    /** Ends every worker now; queued work is refused. The pool stays usable (a later task starts a worker). */
    async close() {
      for (const t of queue.splice(0)) t.reject(new ParseFailure('The service is shutting down; try again'))
      const all = slots.splice(0)
      for (const s of all) {
        if (s.idleTimer) clearTimeout(s.idleTimer)
        if (s.task?.timer) clearTimeout(s.task.timer)
        s.task?.reject(new ParseFailure('The service is shutting down; try again'))
        s.task = null
      }
      await Promise.all(all.map((s) => s.worker.terminate()))
    },
  }
}
