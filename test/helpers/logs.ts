import { Writable } from 'node:stream'
import pino, { type Logger } from 'pino'

/** A pino logger that keeps its JSON lines in memory, for tests that assert on what is (not) logged. */
export function memoryLogger(level = 'info'): { log: Logger; lines: () => Record<string, unknown>[]; text: () => string } {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(chunk.toString())
      cb()
    },
  })
  const log = pino({ level }, stream)
  const text = () => chunks.join('')
  return {
    log,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  }
}
