/**
 * PHONE detection for pii.fns.ts (the lowest-priority type there: a span another detector claims wins):
 * candidate digit runs, kept when their shape, separators and context make a phone number likely.
 */

const PHONE_RE = /(?<![\p{L}\p{N}_+\-./@#])(?:\+|\(\s?\+?)?\d[\d \-./()\u00a0]{5,26}\d(?:\s{0,2}(?:x|ext\.?|extension|#)\s{0,2}\d{1,6})?(?![\p{L}\p{N}_@])/gu
const PHONE_CONTEXT_RE =
  /(?<![\p{L}])(?:phone|tel|telephone|mobile|cell|cellphone|call|fax|whats\s?app|sms|text\s+me|reach\s+me|ring|contact|number|nummer|numéro|téléphone|telefon|teléfono|móvil|cellulare|handy|portable|celular)(?![\p{L}])/iu
const NOT_PHONE_CONTEXT_RE =
  /(?:order|invoice|ref|reference|tracking|account|acct|ticket|case|\bid|sku|serial|customer|member|transaction|confirmation|booking|\bpo|iban|card|zip|postal|postcode|pin|isbn|version|model|part|batch|lot|receipt|policy|claim|code)\s*(?:number|no\.?|nr\.?|num\.?|#)?\s*[:#=]?\s*$|#\s*$/i
const CURRENCY_BEFORE_RE = /(?:[$€£¥₹]|\b(?:usd|eur|gbp|chf|jpy|inr|rs\.?|cad|aud))\s*$/i
const CURRENCY_AFTER_RE = /^\s*(?:[$€£¥₹]|(?:usd|eur|gbp|chf|jpy|inr|cad|aud|dollars?|euros?|pounds?|yen)\b)/i

/** A calendar date (year-month-day or day/month/year in either order) at the start, with valid fields. */
function startsWithDate(s: string): boolean {
  let m = /^(\d{4})([-/.])(\d{1,2})\2(\d{1,2})(?!\d)/.exec(s)
  if (m) return Number(m[3]) >= 1 && Number(m[3]) <= 12 && Number(m[4]) >= 1 && Number(m[4]) <= 31
  m = /^(\d{1,2})([-/.])(\d{1,2})\2(\d{4}|\d{2})(?!\d)/.exec(s)
  if (!m) return false
  const a = Number(m[1])
  const b = Number(m[3])
  return a >= 1 && b >= 1 && ((a <= 31 && b <= 12) || (a <= 12 && b <= 31))
}

const NANP_LAYOUT_RE = /^(?:1[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}$/

/**
 * Whether a digit sequence is written like a phone number. With a country code (+, 00) or a phone word
 * just before it, most layouts pass; without either it needs a recognisable national layout: North
 * American 3-3-4, trunk-prefixed (0...), or pairs/triples. Dates, decimals and numeric ranges, money,
 * card-like and SSN-like groupings, and numbers after "order", "invoice", "#"... never pass.
 */
function phoneShapeOk(s: string, before: string, after: string): boolean {
  const ext = /\s*(?:x|ext\.?|extension|#)\s*\d{1,6}$/i.exec(s)
  const main = ext ? s.slice(0, ext.index) : s
  const intl = /^(?:\+|\(\s?\+|00[1-9])/.test(main)
  const digits = main.replace(/\D/g, '')
  const national = digits.startsWith('00') ? digits.slice(2) : digits
  if (intl ? national.length < 8 || national.length > 15 : digits.length < 7 || digits.length > 13) return false
  const groups = main.split(/\D+/).filter(Boolean)
  // single digits in the middle ("1 2 3 4 5 6 7") are counts or lists, not phone groups (+33 1 ... is international)
  if (!intl && groups.slice(1).some((g) => g.length === 1)) return false
  // parentheses only around one leading code: "(555) ...", "+44 (0) 20 ...", "(+33) ..."
  if (/[()]/.test(main) && /[()]/.test(main.replace(/^\+?\d{0,4}\s?\(\s?\+?\d{1,5}\s?\)/, ''))) return false
  // three or more groups of four ("4111 1111 1111") is how cards and account numbers are written
  if (!intl && groups.length >= 3 && groups.every((g) => g.length === 4) && groups[0][0] !== '0') return false
  const sepKinds = new Set(main.replace(/[\d()+\s]/g, ''))
  // decimals in ranges ("35.35-41.23") and numeric ranges or ratios ("11 256/20 849")
  if (sepKinds.has('.') && sepKinds.size > 1) return false
  // ascending lists ("10 11 12 13 14": citations, steps)
  if (groups.length >= 3 && groups.every((g, k) => k === 0 || Number(g) === Number(groups[k - 1]) + 1)) return false

  if (!intl && NOT_PHONE_CONTEXT_RE.test(before)) return false
  if (CURRENCY_BEFORE_RE.test(before) || CURRENCY_AFTER_RE.test(after)) return false
  // dates (2024-01-31, 31/01/2024, 31.01.2024, also followed by a time) and year ranges
  if (startsWithDate(main)) return false
  if (/^(?:19|20)\d\d\s?[-–/]\s?(?:19|20)\d\d$/.test(main)) return false
  // dotted numbers: IPv4-like, versions and decimals
  if (sepKinds.size === 1 && sepKinds.has('.') && !/\s/.test(main) && (groups.length < 3 || (groups.length === 4 && groups.every((g) => g.length <= 3))))
    return false
  // the SSN shape 3-2-4 is not a phone layout
  if (!intl && groups.length === 3 && groups[0].length === 3 && groups[1].length === 2 && groups[2].length === 4) return false
  if (intl || PHONE_CONTEXT_RE.test(before)) return true

  if (groups.length === 1) {
    // unbroken national numbers: North American (area and exchange codes do not start with 0 or 1)
    if (/^1?[2-9]\d{2}[2-9]\d{6}$/.test(digits)) return true
    // trunk-prefixed national numbers (0 then 9-10 digits) as written in most of Europe
    return /^0[1-9]\d{8,9}$/.test(digits)
  }
  if (NANP_LAYOUT_RE.test(main)) return true
  // trunk-prefixed national numbers ("0961-7596216", "030 1234567", "(0151) 1234 5678")
  if (/^\(?0[1-9]/.test(main) && digits.length >= 9 && digits.length <= 12) return true
  // pairs or triples with one consistent separator ("71-33-52-22", "06 12 34 56 78", "699 956 915")
  const seps = main.match(/\D+/g) ?? []
  return groups.length >= 3 && digits.length >= 8 && groups.every((g) => g.length >= 2 && g.length <= 3) && seps.every((x) => x === seps[0])
}

export function findPhones(text: string, add: (start: number, end: number) => void) {
  for (const m of text.matchAll(PHONE_RE)) {
    const cand = m[0]
    const before = text.slice(Math.max(0, m.index - 30), m.index)
    const after = text.slice(m.index + cand.length, m.index + cand.length + 12)
    if (phoneShapeOk(cand, before, after)) {
      add(m.index, m.index + cand.length)
      continue
    }
    // two numbers side by side ("555-123-4567 555-987-6543"): split at whitespace and take valid prefixes
    const parts = [...cand.matchAll(/\S+/g)]
    if (parts.length < 2 || parts.length > 8 || cand.replace(/\D/g, '').length < 14) continue
    let i = 0
    while (i < parts.length) {
      let matched = -1
      for (let j = parts.length - 1; j >= i; j--) {
        if (i === 0 && j === parts.length - 1) continue
        const s = parts[i].index
        const e = parts[j].index + parts[j][0].length
        const sub = cand.slice(s, e)
        if (!/^[(+\d]/.test(sub) || !/\d$/.test(sub)) continue
        const b = text.slice(Math.max(0, m.index + s - 30), m.index + s)
        const a = text.slice(m.index + e, m.index + e + 12)
        if (phoneShapeOk(sub, b, a)) {
          add(m.index + s, m.index + e)
          matched = j
          break
        }
      }
      i = matched >= 0 ? matched + 1 : i + 1
    }
  }
}
