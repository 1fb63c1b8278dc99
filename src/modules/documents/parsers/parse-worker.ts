import { parentPort } from 'node:worker_threads'
import { chunkDocument, type ChunkOptions } from '../chunking.fns.js'
import { checkHealth } from '../health.fns.js'
import type { DocumentFileType } from '../../../db/schema/ingestion.js'
import { ParseFailure, UnsupportedFile } from './errors.js'
import { parseUpload, type ParseLimits } from './parse.js'
// The crawler's page extraction (DOM + Readability) runs here too: seconds and hundreds of MB for a big page.
import { extractHtml } from './html-extract.js'

/** Runs inside a worker thread (see pool.ts): CPU-heavy parsing and chunking off the event loop. */
export type WorkerTask =
  | { id: number; op: 'parse'; filename: string; bytes: Uint8Array; limits: ParseLimits }
  | { id: number; op: 'chunk'; text: string; fileType: DocumentFileType; sourceUrl: string | null; options: ChunkOptions; now: string }
  | { id: number; op: 'html'; html: string; url: string }

export type WorkerReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; kind: 'unsupported' | 'parse' | 'crash'; message: string }

parentPort?.on('message', async (task: WorkerTask) => {
  let reply: WorkerReply
  try {
    const value =
      task.op === 'parse'
        ? await parseUpload(task.filename, task.bytes, task.limits)
        : task.op === 'html'
          ? extractHtml(task.html, task.url)
          : {
              chunks: chunkDocument({ text: task.text, fileType: task.fileType, sourceUrl: task.sourceUrl }, task.options),
              health: checkHealth(task.text, new Date(task.now)),
            }
    reply = { id: task.id, ok: true, value }
  } catch (err) {
    const kind = err instanceof UnsupportedFile ? 'unsupported' : err instanceof ParseFailure ? 'parse' : 'crash'
    const e = err as Error
    reply = { id: task.id, ok: false, kind, message: `${e?.name ?? 'Error'}: ${String(e?.message ?? err).slice(0, 300)}` }
    if (kind !== 'crash') reply.message = String(e.message)
  }
  parentPort!.postMessage(reply)
})

// Loaded: the pool starts a task's clock from here, so a cold start does not eat into the file's time budget.
parentPort?.postMessage({ ready: true })
