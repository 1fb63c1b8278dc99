/**
 * PHONE detection for pii.fns.ts (the lowest-priority type there: a span another detector claims wins).
 *
 * Candidates come from libphonenumber-js (the maintained JavaScript port of Google's libphonenumber, which
 * Presidio uses for this type): `findPhoneNumbersInText` over the text once per region hint (the visitor's
 * locale first, then DEFAULT_PHONE_REGIONS), at its POSSIBLE leniency (the number's length fits the region's
 * plan). A candidate is kept when one of these holds:
 *   1. it is written in international form (+ or 00 and a country code), so no region was guessed;
 *   2. a phone word is next to it ("call me at", "Mobile:", "... is my cell") and no identifier word
 *      ("order", "card", "licence number") is just before it;
 *   3. without such a word: the number is VALID for the region (the full metadata's number-type patterns)
 *      and written in that region's own national layout, digit groups and trunk prefix included
 *      ("(602) 272-9781", "030 1234567", "06 12 34 56 78"), which addresses, amounts and ids seldom are.
 * Whatever the rule, dates, times, money, IPv4-like and version numbers, SSN and card layouts, counts and
 * series are never phones.
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

/** Words just before a number that say it is one to call or text (several languages); "number" after an identifier word is not one (NOT_PHONE_CONTEXT_RE). */
const PHONE_CONTEXT_RE =
  /(?<![\p{L}])(?:phone|tel|telephone|mobile|cell|cellphone|call(?:ed|ing)?|fax|desk|landline|hotline|helpline|dial(?:l?ed|l?ing)?|whats\s?app|signal|viber|telegram|sms|texts?|text(?:ed|ing)|message[sd]?|messaging|answer(?:s|ed|ing)?|reach(?:ed|able)?(?=\s+(?:me|us|him|her|them|at|on|out|via))|ring|registered|contact|téléphone|tél|telefon|teléfono|telefone|móvil|cellulare|handy|portable|celular|number|nummer|numéro|numero|número)(?![\p{L}])|(?<![\p{L}])(?:(?:home|work|office|private|business|direct|main)(?:\s+(?:line|number|phone))?\s*:|(?:office|direct|main|home|work|phone)\s+line)\s*$/iu
/** ... or just after it ("... is my cell", "... here"). */
const PHONE_AFTER_RE = /^\s*(?:is\s+(?:my|our|the|his|her)\s+(?:new\s+)?(?:cell|mobile|phone|number|landline|line)|here\b)/i
/** Identifier and address words just before a number: it is that, not a phone. */
const NOT_PHONE_CONTEXT_RE =
  /(?:order|invoice|ref|reference|tracking|account|acct|ticket|case|\bid|sku|serial|customer|member|transaction|confirmation|booking|\bpo|iban|card|\bcc|zip|postal|postcode|pin|isbn|version|model|part|batch|lot|receipt|policy|claim|code|licen[cs]e|passport|security|ssn|social|tax|vat|registration|unit|apt|apartment|suite|box|room|flight|page|item|article)\s*(?:number|no\.?|nr\.?|num\.?|#)?(?:\s+(?:is|was))?\s*[:#=]?\s*$|#\s*$/i
const CURRENCY_BEFORE_RE = /(?:[$€£¥₹]|\b(?:usd|eur|gbp|chf|jpy|inr|rs\.?|cad|aud))\s*$/i
const CURRENCY_AFTER_RE = /^\s*(?:[$€£¥₹]|(?:usd|eur|gbp|chf|jpy|inr|cad|aud|dollars?|euros?|pounds?|yen)\b)/i
const EXTENSION_RE = /\s*(?:x|ext\.?|extension|#)\s*\d{1,6}$/i

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

const groupsOf = (s: string) => s.split(/\D+/).filter(Boolean)

/** Layouts that are something else whatever the plan says: dates, times, money, versions, IPs, SSNs, cards, series. */
function notAPhone(main: string, intl: boolean, before: string, after: string): boolean {
  const groups = groupsOf(main)
  const seps = new Set(main.replace(/[\d()+\s]/g, ''))
  if (CURRENCY_BEFORE_RE.test(before) || CURRENCY_AFTER_RE.test(after)) return true
  // times (10:30), percentages, decimals cut short (3.14159) and dimensions (1920 x 1080)
  if (/^(?::\d|\s?%|[.,]\d|\s+[x×]\s+\d)/i.test(after) || /\d\s+[x×]\s+$/i.test(before)) return true
  if (startsWithDate(main) || /^(?:19|20)\d\d([-/.])\d{1,2}\1\d{1,2}$/.test(main) || /^(?:19|20)\d\d\s?[-–/]\s?(?:19|20)\d\d$/.test(main)) return true
  if (intl) return false
  // decimals in ranges ("35.35-41.23"), dotted versions and IPv4-like numbers
  if (seps.has('.') && seps.size > 1) return true
  if (seps.size === 1 && seps.has('.') && !/\s/.test(main) && (groups.length < 3 || (groups.length === 4 && groups.every((g) => g.length <= 3)))) return true
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
  return mine.length >= 2 && mine.join(' ') === groupsOf(phone.formatNational().replace(EXTENSION_RE, '')).join(' ')
}

function keep(text: string, start: number, end: number, phone: PhoneNumber): boolean {
  const cand = text.slice(start, end)
  // the matcher at POSSIBLE leniency does not look at the neighbours: a number glued to a word or code is part of it
  if (/[\p{L}\p{N}_@#/\\.-]/u.test(text[start - 1] ?? '') && !/^[+(]/.test(cand)) return false
  if (/[\p{L}\p{N}_@]/u.test(text[end] ?? '')) return false
  const ext = EXTENSION_RE.exec(cand)
  const main = ext ? cand.slice(0, ext.index) : cand
  const intl = /^(?:\+|\(\s?\+|00[1-9])/.test(main)
  const digits = main.replace(/\D/g, '')
  const before = text.slice(Math.max(0, start - 30), start)
  const after = text.slice(end, end + 24)
  if (intl ? digits.replace(/^00/, '').length < 8 : digits.length < 7) return false
  if (digits.length > 17) return false
  if (notAPhone(main, intl, before, after)) return false
  if (intl) return true
  if (NOT_PHONE_CONTEXT_RE.test(before)) return false
  if (PHONE_CONTEXT_RE.test(before) || PHONE_AFTER_RE.test(after)) return true
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
  for (const m of text.matchAll(RUN_RE)) {
    if (m[0].replace(/\D/g, '').length < 7) continue
    for (const [start, win] of windows(m.index, m[0])) {
      const digits = win.replace(/\D/g, '').length
      // fewer digits than any national number, or one unbroken run too long for one
      if (digits < 7 || (digits > 17 && !/\D/.test(win))) continue
      if (budget <= 0) {
        // past the work bound: a whole window of phone length after a phone word, or in international form
        const before = text.slice(Math.max(0, start - 30), start)
        if (digits <= 15 && (/^(?:\+|00[1-9])/.test(win) || (!NOT_PHONE_CONTEXT_RE.test(before) && PHONE_CONTEXT_RE.test(before))))
          add(start, start + win.length)
        continue
      }
      // a window that is a date, an amount, a series ... as a whole costs no matcher call (nor does such junk at any length)
      const before = text.slice(Math.max(0, start - 30), start)
      if (notAPhone(win.replace(EXTENSION_RE, ''), /^(?:\+|\(\s?\+|00[1-9])/.test(win), before, text.slice(start + win.length, start + win.length + 24)))
        continue
      const seen = new Set<string>()
      for (const region of regions) {
        budget -= win.length
        let covered = 0
        for (const found of findPhoneNumbersInText(win, { defaultCountry: region, extended: true })) {
          const s = start + found.startsAt
          const e = start + found.endsAt
          if (seen.has(`${s}:${e}`) || !keep(text, s, e, found.number)) continue
          seen.add(`${s}:${e}`)
          add(s, e)
          covered += win.slice(found.startsAt, found.endsAt).replace(/\D/g, '').length
        }
        if (covered >= digits || budget <= 0) break
      }
    }
  }
}
