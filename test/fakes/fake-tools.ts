/**
 * Function calling for the fake model (fake-llm.ts), as a real model does it: offered `tools`, a question that
 * speaks of a tool (a word of its name, or of its description, among the question's words) gets a `tool_calls`
 * reply with the arguments it can read from the question (a schema's pattern, an enum value, a number, a token
 * with digits for an `..._number`/`..._id`, an e-mail address); the request after the tool messages is answered
 * from their content. Without tools nothing here applies.
 */
import type { FakeMessage } from './fake-llm.js'

export interface FakeToolCall {
  id?: string
  name: string
  /** an object (serialised) or the exact JSON text the model writes */
  arguments: Record<string, unknown> | string
}

interface OfferedTool {
  type?: string
  function?: { name?: string; description?: string; parameters?: { properties?: Record<string, Record<string, unknown>> } }
}

const GENERIC = new Set([
  'get',
  'set',
  'the',
  'a',
  'an',
  'of',
  'by',
  'for',
  'to',
  'and',
  'or',
  'its',
  'my',
  'your',
  'look',
  'up',
  'with',
  'from',
  'on',
  'in',
  'is',
])
const stemOf = (w: string) => w.toLowerCase().replace(/(?:ies|es|s)$/, '')
const termsOf = (text: string) => new Set((text.toLowerCase().match(/[a-z]{3,}/g) ?? []).filter((w) => !GENERIC.has(w)).map(stemOf))

/** The tool a question speaks of: most shared words, the name's words counting double; null when none. */
export function pickTool(tools: OfferedTool[], question: string): OfferedTool | null {
  const q = termsOf(question)
  let best: { tool: OfferedTool; score: number } | null = null
  for (const tool of tools) {
    const name = termsOf((tool.function?.name ?? '').replace(/_/g, ' '))
    const desc = termsOf(tool.function?.description ?? '')
    let score = 0
    for (const t of name) if (q.has(t)) score += 2
    for (const t of desc) if (q.has(t) && !name.has(t)) score += 1
    if (score >= 2 && (!best || score > best.score)) best = { tool, score }
  }
  return best?.tool ?? null
}

/** The arguments a model reads from the question for the tool's parameters. */
export function argumentsFrom(tool: OfferedTool, question: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, schema] of Object.entries(tool.function?.parameters?.properties ?? {})) {
    let value: unknown
    if (typeof schema.pattern === 'string') {
      try {
        value = new RegExp(schema.pattern.replace(/^\^|\$$/g, '')).exec(question)?.[0]
      } catch {}
    }
    if (value === undefined && Array.isArray(schema.enum)) value = schema.enum.find((e) => question.toLowerCase().includes(String(e).toLowerCase()))
    if (value === undefined && (schema.type === 'integer' || schema.type === 'number')) {
      const n = /\b\d+(?:\.\d+)?\b/.exec(question)?.[0]
      if (n !== undefined) value = Number(n)
    }
    if (value === undefined && schema.format === 'email') value = /[\w.+-]+@[\w-]+\.[\w.-]+/.exec(question)?.[0]
    if (value === undefined && /number|id$|code/i.test(name)) value = /\b[A-Za-z]{0,4}-?\d[\w-]*\b/.exec(question)?.[0]
    if (value !== undefined) out[name] = value
  }
  return out
}

/** Whether the conversation's last turn is the tools' answers (the model now answers from them). */
export const afterTools = (messages: FakeMessage[]) => messages.at(-1)?.role === 'tool'

/** An answer from the tool messages since the last user message: their JSON's values, or a failure said plainly. */
export function answerFromTools(messages: FakeMessage[]): string {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user')
  const results = messages.slice(lastUser + 1).filter((m) => m.role === 'tool')
  const parts: string[] = []
  for (const r of results) {
    if (/\bfailed\b|was not made/i.test(r.content)) {
      parts.push('Sorry, I could not get that done right now.')
      continue
    }
    let json: unknown
    try {
      json = JSON.parse(r.content)
    } catch {
      parts.push(r.content.slice(0, 300))
      continue
    }
    const leaves: string[] = []
    const walk = (v: unknown, key: string) => {
      if (Array.isArray(v)) v.forEach((x) => walk(x, key))
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k)
      else if (v !== null && v !== undefined) leaves.push(`${key.replace(/^.*\./, '').replace(/\[\*\]/g, '')}: ${String(v)}`)
    }
    walk(json, '')
    parts.push(leaves.length ? `Here is what I found: ${leaves.join(', ')}.` : 'Done.')
  }
  return parts.join(' ') || 'Done.'
}

/** The calls of a reply as the provider sends them (ids `call_fake<n>_<i>`). */
export function wireCalls(calls: FakeToolCall[], requestId: number) {
  return calls.map((c, i) => ({
    id: c.id ?? `call_fake${requestId}_${i}`,
    type: 'function' as const,
    function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
  }))
}
