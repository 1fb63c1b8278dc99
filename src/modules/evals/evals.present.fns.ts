/**
 * How a run shows an action case's answer. A run never calls an action: the model is given a placeholder result
 * (`{"dry_run": true, "note": "not called: evaluation"}`), and what it writes from that placeholder is no answer a
 * visitor would get ("dry_run: true, note: not called: evaluation"). The run shows the call it asked for as a line a
 * person reads, and the model's own words only when they are not a retelling of the placeholder.
 */

export interface AskedCall {
  name: string
  arguments: Record<string, unknown>
}

const MAX_VALUE_CHARS = 80

const valueText = (v: unknown) => {
  const s = typeof v === 'string' ? `"${v}"` : (JSON.stringify(v) ?? String(v))
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS - 1)}…` : s
}

/** `order_status with order_number "ORD-1042", user_id "u-7"`, or `ping with no arguments`. */
export function callLine(call: AskedCall): string {
  const args = Object.entries(call.arguments)
  const list = args.map(([k, v]) => `${k} ${valueText(v)}`).join(', ')
  return `Would call ${call.name} with ${args.length ? list : 'no arguments'} (actions are not called in an evaluation).`
}

/** Whether a text only retells the placeholder result (its words, not an answer). */
export function retellsPlaceholder(text: string): boolean {
  return /\bdry[_ ]run\b/i.test(text) || /not called:? evaluation/i.test(text)
}

/** The answer a run shows: the calls asked for, one line each, then the model's words unless they retell the placeholder. */
export function presentAnswer(answer: string, calls: readonly AskedCall[]): string {
  if (!calls.length) return answer
  const lines = calls.map(callLine)
  const own = answer.trim()
  if (own && !retellsPlaceholder(own)) lines.push(own)
  return lines.join('\n')
}
