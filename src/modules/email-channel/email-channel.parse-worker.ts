import { parentPort } from 'node:worker_threads'
import { type InboundMail, type ParseStage, parseMime } from './email-channel.mime.js'
import { openRaw, sealRaw } from './email-channel.raw.fns.js'

/**
 * Runs inside a worker thread (email-channel.parse.ts): mailparser, the reply cutter, and everything else that is
 * O(size) on a raw mail (its deflate and sealing for the row, the opening of a stored one) off the event loop.
 */
export interface MailTask {
  id: number
  stage: ParseStage
  /** the mail's bytes, or `sealed`: its stored form (email-channel.raw.fns.ts), opened here under `key` */
  raw?: Uint8Array
  sealed?: string
  key?: string
  /** the stored form of `raw` wanted back, sealed under `key` */
  seal?: boolean
}
export type MailReply = { id: number; ok: true; mail: InboundMail | null; sealed: string | null } | { id: number; ok: false; message: string }

parentPort?.on('message', async (task: MailTask) => {
  let reply: MailReply
  try {
    const raw = task.raw ?? openRaw(task.key!, task.sealed!)
    const mail = await parseMime(raw, task.stage)
    reply = { id: task.id, ok: true, mail, sealed: task.seal && mail ? sealRaw(task.key!, raw) : null }
  } catch (err) {
    reply = { id: task.id, ok: false, message: String((err as Error)?.message ?? err).slice(0, 300) }
  }
  // the files' bytes are moved to the main thread, not copied (each is its own buffer: mailFiles)
  parentPort!.postMessage(reply, reply.ok && reply.mail?.files ? reply.mail.files.map((f) => f.bytes.buffer as ArrayBuffer) : [])
})

// mailparser loaded before the worker says it is ready: the pool starts a task's clock from there, so a cold start
// (seconds under load) does not eat into the mail's time budget
await import('mailparser')
parentPort?.postMessage({ ready: true })
