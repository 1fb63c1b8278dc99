import { parentPort } from 'node:worker_threads'
import { type InboundMail, type ParseStage, parseMime } from './email-channel.mime.js'

/** Runs inside a worker thread (email-channel.parse.ts): mailparser and the reply cutter off the event loop. */
export interface MailTask {
  id: number
  stage: ParseStage
  raw: Uint8Array
}
export type MailReply = { id: number; ok: true; mail: InboundMail | null } | { id: number; ok: false; message: string }

parentPort?.on('message', async (task: MailTask) => {
  let reply: MailReply
  try {
    reply = { id: task.id, ok: true, mail: await parseMime(task.raw, task.stage) }
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
