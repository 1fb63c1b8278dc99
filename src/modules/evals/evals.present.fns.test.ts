import { describe, expect, it } from 'vitest'
import { callLine, presentAnswer, retellsPlaceholder } from './evals.present.fns.js'

describe("an action case's answer in a run", () => {
  const call = { name: 'order_status', arguments: { order_number: 'ORD-1042', user_id: 'u-7' } }

  it('reads the call the model asked for as a sentence, not the placeholder result', () => {
    const shown = presentAnswer('dry_run: true, note: not called: evaluation', [call])
    expect(shown).toBe('Would call order_status with order_number "ORD-1042", user_id "u-7" (actions are not called in an evaluation).')
    expect(shown).not.toContain('dry_run')
  })

  it("keeps the model's own words when they are an answer", () => {
    expect(presentAnswer('Let me check that order for you.', [call]).split('\n')).toEqual([callLine(call), 'Let me check that order for you.'])
  })

  it('leaves answers without calls alone, and says when a call has no arguments', () => {
    expect(presentAnswer('Refunds take 5 days [1].', [])).toBe('Refunds take 5 days [1].')
    expect(callLine({ name: 'ping', arguments: {} })).toBe('Would call ping with no arguments (actions are not called in an evaluation).')
    expect(callLine({ name: 'x', arguments: { n: 3, long: 'y'.repeat(200) } })).toMatch(/^Would call x with n 3, long "y+…/)
  })

  it('knows a retelling of the placeholder in the usual spellings', () => {
    expect(retellsPlaceholder('{"dry_run": true}')).toBe(true)
    expect(retellsPlaceholder('This was a dry run.')).toBe(true)
    expect(retellsPlaceholder('Note: not called: evaluation')).toBe(true)
    expect(retellsPlaceholder('Your order shipped.')).toBe(false)
  })
})
