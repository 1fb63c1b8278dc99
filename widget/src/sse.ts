/**
 * Incremental parser for a `text/event-stream` body read with fetch (EventSource cannot POST). Feed it
 * decoded text as it arrives; it returns the JSON payload of every complete `data:` event. Comment lines
 * (`: ping` heartbeats) and other fields are skipped; a payload that is not JSON is dropped.
 */
export class SseParser {
  private buffer = ''

  push(text: string): unknown[] {
    this.buffer += text.replace(/\r\n?/g, '\n')
    const out: unknown[] = []
    let end: number
    while ((end = this.buffer.indexOf('\n\n')) !== -1) {
      const block = this.buffer.slice(0, end)
      this.buffer = this.buffer.slice(end + 2)
      const data: string[] = []
      for (const line of block.split('\n')) {
        if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5))
      }
      if (!data.length) continue
      try {
        out.push(JSON.parse(data.join('\n')))
      } catch {
        // not ours to interpret
      }
    }
    return out
  }
}
