import { maskSecret } from './actions.fns.js'

/**
 * Masks of an action's secret values in every form they take on the way out and back: raw, percent-encoded
 * (upper or lower case hex, `+` or `%20` for a space, any mix of encoded and plain characters, as servers
 * re-encode URLs in their own way) and JSON-escaped (`\/`, `\uXXXX`). One pattern per secret, a fixed sequence
 * of alternatives per character (no quantifier), so matching stays linear in the text.
 */

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')

/** A hex digit in either case, as a character class. */
const hexClass = (d: string) => (/[0-9]/.test(d) ? d : `[${d.toLowerCase()}${d.toUpperCase()}]`)

const hexByte = (b: number) => b.toString(16).toUpperCase().padStart(2, '0').split('').map(hexClass).join('')

/** Every way one character of a secret may be written in a URL, a form body or a JSON string. */
function charForms(ch: string): string {
  const forms = [escapeRe(ch)]
  forms.push([...Buffer.from(ch, 'utf8')].map((b) => `%${hexByte(b)}`).join(''))
  if (ch === ' ') forms.push('\\+')
  const code = ch.codePointAt(0)!
  const units = code > 0xffff ? [0xd800 + ((code - 0x10000) >> 10), 0xdc00 + ((code - 0x10000) & 0x3ff)] : [code]
  forms.push(units.map((u) => `\\\\u${u.toString(16).padStart(4, '0').toUpperCase().split('').map(hexClass).join('')}`).join(''))
  const json = JSON.stringify(ch).slice(1, -1)
  if (json !== ch) forms.push(escapeRe(json))
  if (ch === '/') forms.push('\\\\/')
  return forms.length === 1 ? forms[0]! : `(?:${forms.join('|')})`
}

const cache = new Map<string, RegExp>()

/** The pattern of a secret's every written form. */
function formsOf(secret: string): RegExp {
  let re = cache.get(secret)
  if (!re) {
    if (cache.size > 500) cache.clear()
    re = new RegExp([...secret].map(charForms).join(''), 'g')
    cache.set(secret, re)
  }
  return re
}

/** Secret values, in any of their forms, replaced by their masks wherever they appear (the longest secret first). */
export function maskAll(text: string, secrets: Record<string, string>): string {
  let out = text
  const values = [...new Set(Object.values(secrets))].filter((v) => v.length > 0).sort((a, b) => b.length - a.length)
  for (const v of values) out = out.replace(formsOf(v), maskSecret(v))
  return out
}
