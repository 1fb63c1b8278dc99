import { describe, expect, it } from 'vitest'
import { type CheckReport, CHECKS_MIN_INTERVAL_MS, createCheckCache, withQuirks } from './capability-checks.js'
import { createQuirkMemory } from './quirks.js'

const okReport = (): CheckReport => ({
  checks: [
    { name: 'chat_stream', ok: true, detail: 'streamed' },
    { name: 'json_mode', ok: true, detail: 'json_schema' },
    { name: 'tool_call', ok: true, detail: 'tools accepted (the model answered without calling the function)' },
    { name: 'embedding', ok: true, detail: 'width 8' },
  ],
  capabilities: { tools: true, json_mode: 'json_schema', embedding_width: 8, vision: null },
  ran_at: new Date(0),
})

describe('capability checks and learned quirks (issue 50, finding 14)', () => {
  it('a forced probe inside the interval shows tools refused since the cached run', async () => {
    const quirks = createQuirkMemory()
    let clock = 1_000_000
    let runs = 0
    const cache = createCheckCache(
      async () => {
        runs++
        return okReport()
      },
      () => clock,
      (r) => withQuirks(r, quirks, 'chat-m'),
    )
    expect((await cache.get('k')).capabilities.tools).toBe(true)
    // the server refuses tools mid-way: the client learns it
    quirks.learn('chat-m', { noTools: true, json: 'json_object' })
    clock += CHECKS_MIN_INTERVAL_MS / 2
    const forced = await cache.get('k', true)
    expect(runs).toBe(1)
    const tool = forced.checks.find((c) => c.name === 'tool_call')!
    expect(tool.ok).toBe(false)
    expect(tool.detail).toContain('refuses tools for chat-m')
    expect(forced.capabilities).toMatchObject({ tools: false, json_mode: 'json_object' })
    expect(cache.cached('k')!.capabilities.tools).toBe(false)
  })

  it('leaves a report alone when nothing was learned', () => {
    const r = okReport()
    expect(withQuirks(r, createQuirkMemory(), 'chat-m')).toBe(r)
    expect(withQuirks(r, null, 'chat-m')).toBe(r)
  })
})
