import { expect } from 'vitest'
import type { TestApp } from './app.js'
import type { Tenant } from './factories.js'

/** A widget visitor's session handed off to the team through the widget's escalate button, and its ticket as the team lists it. */
export async function handedOff(t: TestApp, owner: Tenant, opts: { bot?: string; note?: string } = {}) {
  const visitor = t.api()
  const bot = opts.bot ?? owner.bot.public_id
  const sid = (await visitor.post('/widget/session/init', { bot_id: bot })).body.session_id as string
  const esc = await visitor.post(`/widget/escalate?bot_id=${bot}&session_id=${sid}`, { user_note: opts.note ?? 'My refund is late' })
  expect(esc.status, esc.text).toBe(200)
  const list = await owner.api.get('/escalations')
  const ticket = list.body.tickets.find((x: { session_id: string }) => x.session_id === sid)
  return { visitor, bot, sid, ticket: ticket as { id: string; ticket_number: string } }
}

/**
 * An event stream read over real HTTP: each block between blank lines (a frame, or a `:` comment) handed to
 * `onBlock` as it arrives. `cut` drops the connection and waits for the reader to stop.
 */
export function openEventStream(url: string, headers: Record<string, string>, onBlock: (block: string) => void) {
  const controller = new AbortController()
  let buf = ''
  const done = (async () => {
    const res = await fetch(url, { headers, signal: controller.signal })
    if (res.status !== 200) throw new Error(`stream ${res.status}: ${await res.text()}`)
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buf += decoder.decode(value, { stream: true })
        let i: number
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i)
          buf = buf.slice(i + 2)
          onBlock(block)
        }
      }
    } catch {
      // aborted: the cut connection
    }
  })()
  return {
    cut: async () => {
      controller.abort()
      await done.catch(() => {})
    },
  }
}

/** How visitors see a member without a display name (#39): the bot's name + " team", never the e-mail's local part. */
export async function teamName(owner: Tenant): Promise<string> {
  const bots = await owner.api.get('/bots')
  return `${bots.body.items[0].name} team`
}
