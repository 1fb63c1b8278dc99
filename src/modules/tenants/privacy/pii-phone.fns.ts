/**
 * PHONE detection for pii.fns.ts (the lowest-priority type there: a span another detector claims wins).
 *
 * Candidates come from libphonenumber-js (the maintained JavaScript port of Google's libphonenumber, which
 * Presidio uses for this type): `findPhoneNumbersInText` over the text once per region hint (the visitor's
 * locale first, then DEFAULT_PHONE_REGIONS), at its POSSIBLE leniency (the number's length fits the region's
 * plan). A candidate is kept when one of these holds:
 *   1. it is written in international form (+ or 00 and a country code), so no region was guessed;
 *   2. a phone word is next to it, a few words before or just after ("call me at", "Mobile:", "... -Fax",
 *      "... is my cell", in the languages of pii-phone-context.ts) and no identifier word ("order",
 *      "Rechnung Nr.", "licence number") is just before it;
 *   3. without such a word: the number is VALID for the region (the full metadata's number-type patterns)
 *      and written in that region's own national layout, digit groups and trunk prefix included
 *      ("(602) 272-9781", "030 1234567", "06 12 34 56 78"), which addresses, amounts and ids seldom are.
 * Whatever the rule, dates, times, money, IPv4-like and version numbers, SSN and card layouts, ZIP+4, counts
 * and series are never phones. Numbers of regions the matcher is not given are found by their shape and the
 * words next to them (findShapedPhones, Presidio's context rule), with no region at all.
 *
 * Metadata: the `max` set. With the default `min` set `isValid()` checks little more than length and
 * leading digits, so rule 3 takes more numbers that cannot exist: random digits written 3-3-4 pass it 84 %
 * of the time with `min` against 68 % with `max` ("(ddd) ddd-dddd": 85 / 69 %), for no change on the dev
 * set. The extra 65 KB or so do not matter on the server.
 *
 * Cost: one matcher pass per region over each run of digits (slices of at most WINDOW characters), stopping
 * at the first region that accounts for the whole run, within a work bound per text (BUDGET).
 */
import { type CountryCode, findPhoneNumbersInText, isSupportedCountry, type PhoneNumber } from 'libphonenumber-js/max'
import { identifierBefore, phoneLabelAdjacent, phoneWordAfter, phoneWordBefore } from './pii-phone-context.js'
import { isSpace, trimEndWhere } from '../../../lib/trim-run.fns.js'

/**
 * Regions tried in turn for numbers written without a country code: large markets of the languages the
 * service answers in. The visitor's locale, when known, is tried first.
 */
export const DEFAULT_PHONE_REGIONS: readonly CountryCode[] = ['US', 'GB', 'DE', 'FR', 'IN', 'ES', 'IT', 'NL', 'BR', 'AU', 'MX', 'CN']

/** The main region of a language, for locales given without one ("de" -> DE). English has none: US and GB lead the defaults. */
const LANGUAGE_REGION: Record<string, CountryCode> = {
  de: 'DE',
  fr: 'FR',
  es: 'ES',
  it: 'IT',
  nl: 'NL',
  pt: 'PT',
  pl: 'PL',
  sv: 'SE',
  da: 'DK',
  nb: 'NO',
  no: 'NO',
  fi: 'FI',
  cs: 'CZ',
  sk: 'SK',
  hu: 'HU',
  ro: 'RO',
  el: 'GR',
  tr: 'TR',
  ru: 'RU',
  uk: 'UA',
  ja: 'JP',
  ko: 'KR',
  zh: 'CN',
  hi: 'IN',
  he: 'IL',
}

/** The regions to try for a visitor locale ("fr-CA", "de", "pt_BR", null): its region first, then the defaults. */
export function phoneRegions(locale?: string | null): CountryCode[] {
  const [lang, region] = (locale ?? '').trim().replace('_', '-').split('-')
  const first = region && /^[A-Za-z]{2}$/.test(region) ? region.toUpperCase() : LANGUAGE_REGION[(lang ?? '').toLowerCase()]
  if (!first || !isSupportedCountry(first)) return [...DEFAULT_PHONE_REGIONS]
  return [first, ...DEFAULT_PHONE_REGIONS.filter((r) => r !== first)]
}

const CURRENCY_BEFORE_RE = /(?:[$€£¥₹]|\b(?:usd|eur|gbp|chf|jpy|inr|rs\.?|cad|aud))\s*$/i
const CURRENCY_AFTER_RE = /^\s*(?:[$€£¥₹]|(?:usd|eur|gbp|chf|jpy|inr|cad|aud|dollars?|euros?|pounds?|yen)\b)/i
/** "0172 5551234 here, ...": someone giving their number (taken only for a number the matcher found possible). */
const HERE_RE = /^\s*here\b/i
/**
 * Where an extension at the end starts (`/\s*(?:x|ext\.?|extension|#)\s*\d{1,6}$/i`, its match's index), or -1: by
 * a scan, since that pattern is quadratic on a run of spaces and a candidate's run may be long (issue 50).
 */
export function extensionAt(s: string): number {
  let d = s.length
  while (d > 0 && s.charCodeAt(d - 1) >= 48 && s.charCodeAt(d - 1) <= 57) d--
  if (d === s.length || s.length - d > 6) return -1
  let w = d
  while (w > 0 && isSpace(s[w - 1]!)) w--
  const ends = (word: string) => w >= word.length && s.slice(w - word.length, w).toLowerCase() === word
  const word = s[w - 1] === '#' ? '#' : ['extension', 'ext.', 'ext', 'x'].find(ends)
  if (!word) return -1
  let p = w - word.length
  while (p > 0 && isSpace(s[p - 1]!)) p--
  return p
}
/** `s` without its extension (what `s.replace(EXTENSION_RE, '')` gave). */
const withoutExtension = (s: string) => {
  const at = extensionAt(s)
  return at < 0 ? s : s.slice(0, at)
}

/** A calendar date (year-month-day or day/month/year in either order, "31 01 2026" too) at the start, with valid fields. */
function startsWithDate(s: string): boolean {
  let m = /^(\d{4})([-/.])(\d{1,2})\2(\d{1,2})(?!\d)/.exec(s)
  if (m) return Number(m[3]) >= 1 && Number(m[3]) <= 12 && Number(m[4]) >= 1 && Number(m[4]) <= 31
  m = /^(\d{1,2})([-/.])(\d{1,2})\2(\d{4}|\d{2})(?!\d)/.exec(s) ?? /^(\d{1,2})( )(\d{1,2}) ((?:19|20)\d\d)(?!\d)/.exec(s)
  if (!m) return false
  // more groups in the same layout ("09.16.21.18.58") make a number written in pairs, not a date
  if (new RegExp(`^\\${m[2]}\\d`).test(s.slice(m[0].length))) return false
  const a = Number(m[1])
  const b = Number(m[3])
  return a >= 1 && b >= 1 && ((a <= 31 && b <= 12) || (a <= 12 && b <= 31))
}

const groupsOf = (s: string) => s.split(/\D+/).filter(Boolean)

/** Layouts that are something else whatever the plan says: dates, times, money, versions, IPs, SSNs, cards, series. */
function notAPhone(main: string, intl: boolean, before: string, after: string, worded = false): boolean {
  const groups = groupsOf(main)
  const seps = new Set(main.replace(/[\d()+\s]/g, ''))
  if (CURRENCY_BEFORE_RE.test(before) || CURRENCY_AFTER_RE.test(after)) return true
  // times (10:30), percentages, decimals cut short (3.14159) and dimensions (1920 x 1080)
  if (/^(?::\d|\s?%|[.,]\d|\s+[x×]\s+\d)/i.test(after) || /\d\s+[x×]\s+$/i.test(before)) return true
  if (startsWithDate(main) || /^(?:19|20)\d\d([-/.])\d{1,2}\1\d{1,2}$/.test(main) || /^(?:19|20)\d\d\s?[-–/]\s?(?:19|20)\d\d$/.test(main)) return true
  if (intl) return false
  // US ZIP+4 (90210-1234) and opening hours written as HHMM-HHMM (0800-1700, 09 00 - 17 00)
  if (/^\d{5}-\d{4}$/.test(main) || /^(?:[01]\d|2[0-3])[ .]?[0-5]\d\s?[-–]\s?(?:[01]\d|2[0-3])[ .]?[0-5]\d$/.test(main)) return true
  // decimals in ranges ("35.35-41.23"), dotted versions and IPv4-like numbers
  if (seps.has('.') && seps.size > 1) return true
  // (with a phone word next to it, two dotted groups are a number written with a dot when neither reads as a
  // decimal part, "Fax 077.123456", "05.1234567"; and four of two digits a number written in pairs, "70.12.34.56")
  const ipv4 = groups.length === 4 && groups.every((g) => Number(g) <= 255 && !/^0\d/.test(g)) && !(worded && groups.every((g) => g.length === 2))
  const decimal = groups.length < 3 && !(worded && (groups[0][0] === '0' || groups.every((g) => g.length >= 3)))
  if (seps.size === 1 && seps.has('.') && !/\s/.test(main) && (decimal || ipv4)) return true
  // the SSN layout 3-2-4, and groups of four as cards and account numbers are written
  if (groups.length === 3 && groups[0].length === 3 && groups[1].length === 2 && groups[2].length === 4) return true
  if (groups.length >= 3 && groups.every((g) => g.length === 4) && groups[0][0] !== '0') return true
  // lists, counts and amounts: single digits in the middle, series ("10 20 30 40", "10 11 12 13"), thousands ("12 500 000")
  if (groups.slice(1).some((g) => g.length === 1)) return true
  if (groups.length >= 3 && groups.every((g, k) => k < 2 || Number(g) - Number(groups[k - 1]) === Number(groups[1]) - Number(groups[0]))) return true
  if (groups.length >= 3 && groups.slice(1).every((g) => g.length === 3) && (groups[groups.length - 1] === '000' || /^[1-9]$/.test(groups[0]))) return true
  return false
}

/** Written as the region writes its numbers: the same digit groups as the national format (trunk prefix included). */
function nationalLayout(main: string, phone: PhoneNumber): boolean {
  const mine = groupsOf(main)
  return mine.length >= 2 && mine.join(' ') === groupsOf(withoutExtension(phone.formatNational())).join(' ')
}

function keep(text: string, start: number, end: number, phone: PhoneNumber): boolean {
  const cand = text.slice(start, end)
  // the matcher at POSSIBLE leniency does not look at the neighbours: a number glued to a word or code is part of it
  if (/[\p{L}\p{N}_@#/\\.-]/u.test(text[start - 1] ?? '') && !/^[+(]/.test(cand)) return false
  if (/[\p{L}\p{N}_@]/u.test(text[end] ?? '')) return false
  const main = withoutExtension(cand)
  const intl = /^(?:\+|\(\s?\+|00[1-9])/.test(main)
  const digits = main.replace(/\D/g, '')
  const before = text.slice(Math.max(0, start - 30), start)
  const after = text.slice(end, end + 24)
  if (intl ? digits.replace(/^00/, '').length < 8 : digits.length < 7) return false
  if (digits.length > 17) return false
  if (notAPhone(main, intl, before, after)) return false
  if (intl) return true
  if (identifierBefore(text, start)) return false
  if (phoneWordBefore(text, start) || phoneWordAfter(text, end) || HERE_RE.test(after)) return true
  return phone.isValid() && nationalLayout(main, phone)
}

/** Runs of digits and the characters numbers are written with (linear: one class, then back to the last digit). */
const RUN_RE = /[+(]?\d[\d \-./()\u00a0]*\d(?:\s{0,2}(?:x|ext\.?|extension|#)\s{0,2}\d{1,6})?/giu
/** The matcher looks at one run (or one slice of a long run) at a time. */
const WINDOW = 40
/**
 * Work bound for long texts: characters times regions given to the matcher per text (about 1 ms per 200).
 * A chat message never comes near it; past it, what is left is judged without the matcher (see findPhones).
 */
const BUDGET = 6_000

/** Slices of a run of at most WINDOW characters, cut at a space where possible, else between digit groups (a list of numbers on one line). */
function windows(start: number, run: string): Array<[number, string]> {
  if (run.length <= WINDOW) return [[start, run]]
  const out: Array<[number, string]> = []
  let from = 0
  while (from < run.length) {
    let to = Math.min(run.length, from + WINDOW)
    if (to < run.length) {
      let cut = -1
      for (let k = to; k > from + 1; k--) {
        if (run[k] === ' ') {
          cut = k
          break
        }
        if (cut < 0 && !/\d/.test(run[k])) cut = k
      }
      if (cut > 0) to = cut
    }
    out.push([start + from, run.slice(from, to)])
    from = to
    while (from < run.length && !/[\d+(]/.test(run[from])) from++
  }
  return out
}

/**
 * Phone numbers in the text, as [start, end) spans, trying the regions in turn (a window stops at the first
 * region that accounts for all of it). Overlapping spans are left to the caller's resolution.
 */
export function findPhones(text: string, add: (start: number, end: number) => void, regions: readonly CountryCode[] = DEFAULT_PHONE_REGIONS) {
  let budget = BUDGET
  // spans already taken, so the shape rule does not judge the same number again
  const taken = new Set<string>()
  for (const m of text.matchAll(RUN_RE)) {
    if (m[0].replace(/\D/g, '').length < 7) continue
    for (const [start, win] of windows(m.index, m[0])) {
      const digits = win.replace(/\D/g, '').length
      // fewer digits than any national number, or one unbroken run too long for one
      if (digits < 7 || (digits > 17 && !/\D/.test(win))) continue
      if (budget <= 0) {
        // past the work bound: a whole window of phone length after a phone word, or in international form
        if (digits <= 15 && (/^(?:\+|00[1-9])/.test(win) || (!identifierBefore(text, start) && phoneWordBefore(text, start)))) add(start, start + win.length)
        continue
      }
      // a window that is a date, an amount, a series ... as a whole costs no matcher call (nor does such junk at any length)
      const before = text.slice(Math.max(0, start - 30), start)
      if (notAPhone(withoutExtension(win), /^(?:\+|\(\s?\+|00[1-9])/.test(win), before, text.slice(start + win.length, start + win.length + 24))) continue
      const seen = new Set<string>()
      for (const region of regions) {
        budget -= win.length
        let covered = 0
        for (const found of findPhoneNumbersInText(win, { defaultCountry: region, extended: true })) {
          const s = start + found.startsAt
          const e = start + found.endsAt
          if (seen.has(`${s}:${e}`) || !keep(text, s, e, found.number)) continue
          seen.add(`${s}:${e}`)
          taken.add(`${s}:${e}`)
          add(s, e)
          covered += win.slice(found.startsAt, found.endsAt).replace(/\D/g, '').length
        }
        if (covered >= digits || budget <= 0) break
      }
    }
  }
  findShapedPhones(text, add, taken)
}

/**
 * Numbers of any region by their shape and the words next to them, without the matcher (Presidio's context
 * rule): a run of 8 to 15 digits in groups separated by spaces, dots, dashes or parentheses (optional + or 00
 * and country code, optional extension) is a phone number
 *   - when a phone word is next to it (phoneWordBefore / phoneWordAfter) and no identifier word is just before it;
 *   - or, without one, when its shape says phone: a leading + and country code, 00 and a country code in
 *     groups, or a trunk-prefixed area code in parentheses or before a slash ("(089) 123 4567", "030/1234567").
 * Dates, times, money, versions, IPs, SSN and card layouts, ZIP codes, counts and series never are (notAPhone);
 * cards and IBANs also win any overlap in pii.fns.ts. This is what finds national numbers of regions the
 * matcher is not given ("0664 123456 -Fax", "Telefon 078 123 45 67").
 */
const SHAPED_RE =
  /(?<![\p{L}\p{N}_@#/\\.,+-]|\p{N}[:])(?:\+|00)?\(?\d[\d \u00a0.\-–()/]*\d(?:\s{0,2}(?:x|ext\.?|extension|#)\s{0,2}\d{1,6})?(?![\p{L}\p{N}_@])/giu

export function findShapedPhones(text: string, add: (start: number, end: number) => void, taken: ReadonlySet<string> = new Set()) {
  for (const m of text.matchAll(SHAPED_RE)) {
    if (m[0].length < 6) continue // fewer than six digits
    // a slash joins an area code to its number ("030/1234567") and nothing else: elsewhere it separates two values
    const parts = /^\(?0\d{1,4}\)?\s?\/\s?\d[^/]*$/.test(m[0]) ? [[0, m[0]] as const] : splitAt(m[0], '/')
    for (const [offset, part] of parts) {
      const start = m.index + offset
      const end = start + part.length
      if (!taken.has(`${start}:${end}`) && shapedPhone(text, start, end)) add(start, end)
    }
  }
}

function splitAt(run: string, sep: string): Array<readonly [number, string]> {
  const out: Array<readonly [number, string]> = []
  let from = 0
  for (const piece of run.split(sep)) {
    const lead = piece.length - piece.trimStart().length
    const trimmed = trimEndWhere(piece.trim(), (c) => isSpace(c) || '.-–('.includes(c))
    if (trimmed) out.push([from + lead, trimmed])
    from += piece.length + sep.length
  }
  return out
}

function shapedPhone(text: string, start: number, end: number): boolean {
  const cand = text.slice(start, end)
  const main = withoutExtension(cand)
  const intl = /^(?:\+|\(\+|00[1-9])/.test(main)
  const digits = main.replace(/\D/g, '').replace(/^00/, '').length
  if (digits < 6 || digits > 15 || /^\(?[^(]*\)$/.test(main)) return false
  // six digits (the Faroes, Greenland, New Caledonia ...) only with a phone word right next to them
  if (digits === 6 && (intl || identifierBefore(text, start) || !phoneLabelAdjacent(text, start, end))) return false
  const before = text.slice(Math.max(0, start - 30), start)
  const after = text.slice(end, end + 24)
  // the first slash and the spaces around it as one space (`/\s*\/\s*/`, quadratic on a run of spaces, by a scan)
  const slash = main.indexOf('/')
  let from = slash
  let to = slash + 1
  while (slash >= 0 && from > 0 && isSpace(main[from - 1]!)) from--
  while (slash >= 0 && to < main.length && isSpace(main[to]!)) to++
  const layout = slash < 0 ? main : `${main.slice(0, from)} ${main.slice(to)}`
  // the layout checks first, as leniently as a phone word would have them: most runs end there, before any word is read
  if (notAPhone(layout, intl, before, after, true)) return false
  const worded = !identifierBefore(text, start) && (phoneWordBefore(text, start) || phoneWordAfter(text, end))
  if (!worded && notAPhone(layout, intl, before, after)) return false
  // "+" and a country code is a phone whatever is around it; "00" only when written in groups (else an id)
  if (main.startsWith('+') || main.startsWith('(+')) return digits >= 8
  if (worded) return true
  if (digits < 8 || identifierBefore(text, start)) return false
  if (intl && /\D/.test(main.slice(2))) return true
  if (/^0[1-9]\d{0,4}[ .-]\d{2,}(?:[ .-]\d{2,})*$/.test(main) && digits >= 9 && digits <= 12) return true
  return /^\(0\d{1,4}\)\s?\d/.test(main) || /^0\d{1,4}\s?\/\s?\d/.test(main)
}
