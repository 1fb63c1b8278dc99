import type { Body, Res } from '../api/types'

/** The actions screen's types, straight from the generated schema. */
export type Action = Res<'/actions/{id}', 'get'>
export type ActionInput = Body<'/actions', 'post'>
export type Parameter = NonNullable<ActionInput['parameters']>[number]
export type Source = Parameter['source']
export type TestResult = Res<'/actions/{id}/test', 'post'>
export type ActionCall = Res<'/actions/{id}/calls', 'get'>['items'][number]

export const SOURCES: readonly (readonly [Source, string])[] = [
  ['model', 'Model (the bot fills it in)'],
  ['visitor', 'Visitor (a claim of the signed identity)'],
  ['secret', 'Secret (stored, write-only)'],
  ['constant', 'Constant'],
]
export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/** "Name: value" lines to a headers object, and back. */
export const headersFromText = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .map((l) => {
        const at = l.indexOf(':')
        return at < 0 ? [l, ''] : [l.slice(0, at).trim(), l.slice(at + 1).trim()]
      }),
  )
export const headersToText = (h: Record<string, string>) =>
  Object.entries(h)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n')

/** Parses JSON typed by an operator: the value, or the reason it is not JSON. */
export function parseJson(text: string, what: string): { value: unknown; error?: undefined } | { value?: undefined; error: string } {
  if (!text.trim()) return { value: undefined }
  try {
    return { value: JSON.parse(text) }
  } catch (e) {
    return { error: `${what} is not valid JSON: ${(e as Error).message}` }
  }
}
