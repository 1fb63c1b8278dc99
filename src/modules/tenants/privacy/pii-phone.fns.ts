/**
 * PHONE detection for pii.fns.ts (the lowest-priority type there: a span another detector claims wins):
 * candidate digit runs, kept when their shape, separators and context make a phone number likely.
 */

const PHONE_RE = /(?<![\p{L}\p{N}_+\-./@#])(?:\+|\(\s?\+?)?\d[\d \-./()\u00a0]{5,26}\d(?:\s{0,2}(?:x|ext\.?|extension|#)\s{0,2}\d{1,6})?(?![\p{L}\p{N}_@])/gu
/** Words just before a number that say it is one to call or text (several languages). */
const PHONE_CONTEXT_RE =
  /(?<![\p{L}])(?:phone|tel|telephone|mobile|cell|cellphone|call(?:ed|ing)?|fax|desk|landline|hotline|helpline|dial(?:l?ed|l?ing)?|whats\s?app|signal|viber|telegram|sms|texts?|text(?:ed|ing)|message[sd]?|messaging|answer(?:s|ed|ing)?|reach(?:ed|able)?(?=\s+(?:me|us|him|her|them|at|on|out|via))|ring|registered|contact|number|nummer|numéro|numero|téléphone|tél|telefon|teléfono|telefone|móvil|cellulare|handy|portable|celular)(?![\p{L}])|(?<![\p{L}])(?:(?:home|work|office|private|business|direct|main)(?:\s+(?:line|number|phone))?\s*:|(?:office|direct|main|home|work|phone)\s+line)\s*$/iu
/** ... or just after it ("... is my cell", "... here"). */
const PHONE_AFTER_RE = /^\s*(?:is\s+(?:my|our|the|his|her)\s+(?:new\s+)?(?:cell|mobile|phone|number|landline|line)|here\b)/i
const NOT_PHONE_CONTEXT_RE =
  /(?:order|invoice|ref|reference|tracking|account|acct|ticket|case|\bid|sku|serial|customer|member|transaction|confirmation|booking|\bpo|iban|card|zip|postal|postcode|pin|isbn|version|model|part|batch|lot|receipt|policy|claim|code)\s*(?:number|no\.?|nr\.?|num\.?|#)?(?:\s+(?:is|was))?\s*[:#=]?\s*$|#\s*$/i
const CURRENCY_BEFORE_RE = /(?:[$€£¥₹]|\b(?:usd|eur|gbp|chf|jpy|inr|rs\.?|cad|aud))\s*$/i
const CURRENCY_AFTER_RE = /^\s*(?:[$€£¥₹]|(?:usd|eur|gbp|chf|jpy|inr|cad|aud|dollars?|euros?|pounds?|yen)\b)/i

/** A calendar date (year-month-day or day/month/year in either order) at the start, with valid fields. */
function startsWithDate(s: string): boolean {
  let m = /^(\d{4})([-/.])(\d{1,2})\2(\d{1,2})(?!\d)/.exec(s)
  if (m) return Number(m[3]) >= 1 && Number(m[3]) <= 12 && Number(m[4]) >= 1 && Number(m[4]) <= 31
  m = /^(\d{1,2})([-/.])(\d{1,2})\2(\d{4}|\d{2})(?!\d)/.exec(s)
  if (!m) return false
  // more groups in the same layout ("09.16.21.18.58") make a number written in pairs, not a date
  if (new RegExp(`^\\${m[2]}\\d`).test(s.slice(m[0].length))) return false
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
  // counting or a series ("10 20 30 40"), and amounts in thousands ("12 500 000")
  if (groups.length >= 3 && groups.every((g, k) => k < 2 || Number(g) - Number(groups[k - 1]) === Number(groups[1]) - Number(groups[0]))) return false
  if (!intl && groups.length >= 3 && groups.slice(1).every((g) => g.length === 3) && (groups[groups.length - 1] === '000' || /^[1-9]$/.test(groups[0])))
    return false
  // year first, then month and day, however invalid ("2023/45/12")
  if (/^(?:19|20)\d\d([-/.])\d{1,2}\1\d{1,2}$/.test(main)) return false
  if (intl || PHONE_CONTEXT_RE.test(before) || PHONE_AFTER_RE.test(after)) return true

  if (groups.length === 1) {
    // unbroken national numbers: North American (area and exchange codes do not start with 0 or 1)
    if (/^1?[2-9]\d{2}[2-9]\d{6}$/.test(digits)) return true
    // trunk-prefixed national numbers (0 then 9-10 digits) as written in most of Europe
    return /^0[1-9]\d{8,9}$/.test(digits)
  }
  if (NANP_LAYOUT_RE.test(main)) return true
  // an area code in parentheses, then the subscriber number in two to four groups ("(71) 4233-6306",
  // "8 (952) 282-10-79", "0 (532) 620 62 10")
  if (/^(?:\d{1,3}\s?)?\(\d{2,5}\)\s?\d{2,5}(?:[-\s]\d{2,4}){1,3}$/.test(main) && digits.length >= 8) return true
  // mobile numbers of eleven digits starting with 1 written 3-4-4 (China)
  if (/^1[3-9]\d[ -]\d{4}[ -]\d{4}$/.test(main)) return true
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
    const after = text.slice(m.index + cand.length, m.index + cand.length + 24)
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
        const a = text.slice(m.index + e, m.index + e + 24)
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
