/**
 * PII redaction: pure functions, no I/O. Runs on every visitor message before anything leaves the
 * process or is stored.
 *
 * Mandatory types: EMAIL, PHONE (libphonenumber-js with region hints, and any region's numbers by their shape
 * and the phone words next to them: pii-phone.fns.ts), CARD (Luhn + issuer prefix), IBAN (country length +
 * mod 97), API_KEY (known key formats, JWTs, Bearer/Basic credentials, keyed secrets, PEM private keys,
 * high-entropy tokens), PASSWORD (values after "password:", "pwd=", "my password is ...", URL user-info).
 * Optional (per tenant): ID_DOC (US SSN with validity rules; passport, licence and national/tax ids after
 * a keyword), IP (IPv4 with valid octets, IPv6), URL_TOKEN (values of token/key/sig/code/session-like
 * query parameters).
 *
 * Every pattern is linear: character classes with bounded or possessive-like use (a negative look-behind
 * on the same class keeps the engine from restarting inside a run), and validation in code instead of
 * clever regexes. Overlaps: the higher priority wins, then the longer span.
 */
import { isIPv6 } from 'node:net'
import { findPhones, phoneRegions } from './pii-phone.fns.js'
import { IBAN_LENGTHS, cardPrefixPlausible, ibanChecksumValid, looksLikeSecret, luhnValid, ssnValid } from './pii-checks.js'
import { trimEndOf } from '../../../lib/trim-run.fns.js'

export const MANDATORY_PII_TYPES = ['EMAIL', 'PHONE', 'CARD', 'IBAN', 'API_KEY', 'PASSWORD'] as const
export const OPTIONAL_PII_TYPES = ['ID_DOC', 'IP', 'URL_TOKEN'] as const
export type OptionalPiiType = (typeof OPTIONAL_PII_TYPES)[number]
export type PiiType = (typeof MANDATORY_PII_TYPES)[number] | OptionalPiiType

export type IdDocKind = 'SSN' | 'PASSPORT' | 'DRIVER_LICENSE' | 'NATIONAL_ID' | 'TAX_ID'

export interface PiiEntity {
  type: PiiType
  /** Offsets in the original text, end exclusive. */
  start: number
  end: number
  /** For ID_DOC: which kind of document number. */
  subtype?: IdDocKind
}

export interface RedactOptions {
  optional?: ReadonlySet<OptionalPiiType>
  /** The visitor's locale ("fr-FR", "de"): its region is tried first for phone numbers written without a country code. */
  locale?: string | null
}

export interface RedactResult {
  text: string
  entities: PiiEntity[]
  /** Number of entities per type found (types absent when none). */
  counts: Partial<Record<PiiType, number>>
}

export const placeholder = (type: PiiType) => `[${type}]`

interface Candidate extends PiiEntity {
  priority: number
}

const PRIORITY = {
  KEY_SPECIFIC: 100,
  PASSWORD: 95,
  IBAN: 90,
  CARD: 88,
  EMAIL: 85,
  URL_TOKEN: 80,
  KEY_CONTEXT: 78,
  ID_DOC: 70,
  IP: 65,
  KEY_GENERIC: 50,
  PHONE: 40,
} as const

type Add = (type: PiiType, start: number, end: number, priority: number, subtype?: IdDocKind) => void

// ---------------------------------------------------------------------------------------------------------
// EMAIL

const EMAIL_RE = /(?<![\p{L}\p{N}._%+\-'])[\p{L}\p{N}._%+\-']{1,64}@[\p{L}\p{N}-]{1,63}(?:\.[\p{L}\p{N}-]{1,63}){1,8}/gu

function findEmails(text: string, add: Add) {
  for (const m of text.matchAll(EMAIL_RE)) {
    let start = m.index
    let s = m[0]
    // a local part does not start with a dot or a quote; a domain does not end with a hyphen
    const lead = /^[._%+\-']+/.exec(s)?.[0].length ?? 0
    start += lead
    s = trimEndOf(s.slice(lead), '-')
    const at = s.indexOf('@')
    if (at <= 0) continue
    const domain = s.slice(at + 1)
    const labels = domain.split('.')
    // drop trailing labels that cannot be a top-level domain (e.g. a sentence's next word glued on)
    while (labels.length > 1 && !/^\p{L}{2,63}$/u.test(labels[labels.length - 1])) labels.pop()
    if (labels.length < 2) continue
    const end = start + at + 1 + labels.join('.').length
    add('EMAIL', start, end, PRIORITY.EMAIL)
  }
}

// ---------------------------------------------------------------------------------------------------------
// CARD

const DIGIT_RUN_RE = /(?<![\p{L}\p{N}_])\d(?:[ -]?\d){11,}(?![\p{L}_])/gu

function findCards(text: string, add: Add) {
  for (const m of text.matchAll(DIGIT_RUN_RE)) {
    const run = m[0]
    if (run.length > 400) continue
    // groups of digits with their offsets inside the run
    const groups: Array<{ s: number; e: number; sep: string }> = []
    for (const g of run.matchAll(/\d+/g)) groups.push({ s: g.index, e: g.index + g[0].length, sep: g.index > 0 ? run[g.index - 1] : '' })
    let i = 0
    while (i < groups.length) {
      let found = false
      let digits = ''
      for (let j = i; j < groups.length; j++) {
        digits += run.slice(groups[j].s, groups[j].e)
        if (digits.length > 19) break
        if (digits.length < 12) continue
        const window = groups.slice(i, j + 1)
        if (
          !cardGroupingOk(
            window.map((g) => g.e - g.s),
            window.slice(1).map((g) => g.sep),
          )
        )
          continue
        if (luhnValid(digits) && cardPrefixPlausible(digits)) {
          add('CARD', m.index + groups[i].s, m.index + groups[j].e, PRIORITY.CARD)
          i = j + 1
          found = true
          break
        }
      }
      if (!found) i++
    }
  }
}

/** Cards are written unbroken, in groups of four (last group shorter), or 4-6-5 / 4-6-4 (Amex, Diners). */
function cardGroupingOk(sizes: number[], seps: string[]): boolean {
  if (sizes.length === 1) return true
  if (new Set(seps).size > 1) return false
  if (sizes.length === 3 && sizes[0] === 4 && sizes[1] === 6 && (sizes[2] === 5 || sizes[2] === 4)) return true
  for (let k = 0; k < sizes.length - 1; k++) if (sizes[k] !== 4) return false
  return sizes[sizes.length - 1] >= 1 && sizes[sizes.length - 1] <= 4
}

// ---------------------------------------------------------------------------------------------------------
// IBAN

const IBAN_RE = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]){10,40}/g

function findIbans(text: string, add: Add) {
  IBAN_RE.lastIndex = 0
  for (let m = IBAN_RE.exec(text); m; m = IBAN_RE.exec(text)) {
    const cc = m[0].slice(0, 2).toUpperCase()
    const len = IBAN_LENGTHS[cc]
    if (!len) {
      IBAN_RE.lastIndex = m.index + 1
      continue
    }
    let chars = ''
    let end = m.index
    for (let k = 0; k < m[0].length && chars.length < len; k++) {
      const c = m[0][k]
      if (c !== ' ' && c !== '-') {
        chars += c
        end = m.index + k + 1
      }
    }
    const nextIsAlnum = /[\p{L}\p{N}]/u.test(text[end] ?? '')
    if (chars.length === len && !nextIsAlnum && ibanChecksumValid(chars.toUpperCase())) {
      add('IBAN', m.index, end, PRIORITY.IBAN)
      IBAN_RE.lastIndex = end
    } else {
      IBAN_RE.lastIndex = m.index + 1
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// API_KEY

const KEY_FORMATS: RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{20,}/g, // OpenAI (sk-, sk-proj-), Anthropic (sk-ant-)
  /\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}/g, // Stripe
  /\bwhsec_[A-Za-z0-9]{16,}/g, // webhook signing secrets
  /\bck_[A-Za-z0-9_-]{16,}/g, // this service's own API keys
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub
  /\bgithub_pat_[A-Za-z0-9_]{40,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack
  /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b/g, // AWS access key ids
  /\bAIza[0-9A-Za-z_-]{35}/g, // Google
  /\bglpat-[A-Za-z0-9_-]{20,}/g, // GitLab
  /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g, // SendGrid
  /\bhf_[A-Za-z0-9]{30,}/g, // Hugging Face
  /\bnpm_[A-Za-z0-9]{36}\b/g,
]

const isTokenChar = (c: string | undefined) =>
  c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c === '_' || c === '-')
/** the end of the run of `[A-Za-z0-9_-]` that starts at `i` */
const tokenRunEnd = (s: string, i: number) => {
  while (isTokenChar(s[i])) i++
  return i
}

/**
 * JWTs: the matches of `/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*\/g` as [start, end), by a scan.
 * The pattern read the whole run of token characters from every `eyJ` in it (1 s on 50,000 characters of
 * `eyJ0000000-`, issue 50); what follows a run is the same for every start in it, so each run is read once.
 */
export function jwtSpans(s: string): Array<[number, number]> {
  const out: Array<[number, number]> = []
  let runEnd = -1
  for (let i = s.indexOf('eyJ'); i >= 0; i = s.indexOf('eyJ', i + 1)) {
    // `\b`: not after a letter, digit or `_` (a `-` inside a run is a boundary)
    const before = s[i - 1]
    if (before !== undefined && before !== '-' && isTokenChar(before)) continue
    if (i >= runEnd) runEnd = tokenRunEnd(s, i + 3)
    const b = runEnd
    let end = -1
    if (b - i - 3 >= 8 && s[b] === '.' && s.startsWith('eyJ', b + 1)) {
      const b2 = tokenRunEnd(s, b + 4)
      if (b2 - b - 4 >= 8 && s[b2] === '.') end = tokenRunEnd(s, b2 + 1)
    }
    if (end < 0) {
      // a later start in this run is shorter and meets the same rest: none matches
      i = b - 1
      continue
    }
    out.push([i, end])
    i = end - 1
  }
  return out
}
const BEARER_RE = /\bBearer\s+([A-Za-z0-9\-._~+/]{16,}=*)/dg
const BASIC_RE = /\bAuthorization\s*:\s*Basic\s+([A-Za-z0-9+/]{8,}={0,2})/dgi
const KEYED_SECRET_RE =
  /\b(?:api[_\s-]?key|apikey|access[_\s-]?key(?:[_\s-]?id)?|secret(?:[_\s-]?(?:access[_\s-]?)?key)?|client[_\s-]?secret|auth[_\s-]?token|access[_\s-]?token|refresh[_\s-]?token|api[_\s-]?token|bot[_\s-]?token|token|private[_\s-]?key)\b["']?\s{0,3}(?:is\s*:?|:|=>?)\s{0,3}["']?([A-Za-z0-9_\-.+/=~]{12,256})/dgi
const PEM_BEGIN_RE = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----/g
const PEM_END_RE = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----/g
const GENERIC_TOKEN_RE = /(?<![A-Za-z0-9_\-+/])[A-Za-z0-9_\-+/]{20,}={0,2}(?![A-Za-z0-9_\-+/=])/g

function findApiKeys(text: string, add: Add) {
  for (const re of KEY_FORMATS) for (const m of text.matchAll(re)) add('API_KEY', m.index, m.index + m[0].length, PRIORITY.KEY_SPECIFIC)
  for (const [s, e] of jwtSpans(text)) add('API_KEY', s, e, PRIORITY.KEY_SPECIFIC)
  for (const re of [BEARER_RE, BASIC_RE]) {
    for (const m of text.matchAll(re)) {
      const [s, e] = m.indices![1]
      add('API_KEY', s, e - (m[1].length - trimEndOf(m[1], '.').length), PRIORITY.KEY_SPECIFIC)
    }
  }
  for (const m of text.matchAll(KEYED_SECRET_RE)) {
    let [s, e] = m.indices![1]
    const v = trimEndOf(text.slice(s, e), '.,;:')
    e = s + v.length
    if (/\d/.test(v) && /[A-Za-z]/.test(v) && !/^\d+[.-]\d+/.test(v)) add('API_KEY', s, e, PRIORITY.KEY_CONTEXT)
  }
  let pemCovered = 0
  for (const m of text.matchAll(PEM_BEGIN_RE)) {
    if (m.index < pemCovered) continue
    PEM_END_RE.lastIndex = m.index + m[0].length
    const end = PEM_END_RE.exec(text)
    // no END marker: the rest of the text is key material (and no later BEGIN can have an END either)
    pemCovered = end ? end.index + end[0].length : text.length
    add('API_KEY', m.index, pemCovered, PRIORITY.KEY_SPECIFIC)
  }
  for (const m of text.matchAll(GENERIC_TOKEN_RE)) {
    const v = m[0]
    if (v.length > 1024) continue
    // hyphen/slash-joined names ("PI3K-Akt-mTORC1-S6K1/2") have many separators; random tokens few
    if ((v.match(/[-_/+]/g)?.length ?? 0) > v.length / 12 + 0.5) continue
    // base64 may contain '/': judge it without them (paths are words, so they stay unlike secrets)
    if (looksLikeSecret(v.replace(/[/=]/g, ''))) {
      add('API_KEY', m.index, m.index + v.length, PRIORITY.KEY_GENERIC)
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// PASSWORD

const PASSWORD_KEYWORD = String.raw`password|passwd|passphrase|passcode|pass|pwd|pw|pin(?:\s?code)?|mot\s+de\s+passe|contrase(?:ñ|n)a|passwort|kennwort|senha|wachtwoord|parola\s+d'ordine|has[łl]o|пароль`
/** keyword, optional "for my account" filler, then ":" / "=" / "is". */
const PASSWORD_RE = new RegExp(
  String.raw`(?<![\p{L}\p{N}_])(${PASSWORD_KEYWORD})(?![\p{L}\p{N}])((?:\s+(?:for|of|to|on|at|in)(?:\s+[\p{L}\p{N}.'\-]{1,30}){1,4}?)?)(\s{0,3}[:=]\s{0,3}|\s{0,3}-+>\s{0,3}|\s+(?:is|was|is\s+now|will\s+be|ist|est|es)(?![\p{L}\p{N}])\s*:?\s*)`,
  'giu',
)
const URL_USERINFO_RE = /\b[a-z][a-z0-9+.-]{1,15}:\/\/[^\s:/@]{1,128}:([^\s@/]{1,128})@/dgi
/** Words that follow "password is" in sentences about a password rather than giving one. */
const NOT_A_PASSWORD = new Set(
  (
    'not wrong incorrect invalid expired correct right required too the a an same different working broken reset changed ' +
    'missing empty blank locked weak strong case also still now being set saved stored hidden forgotten lost no very quite ' +
    'really that this it in on for to of my your his her our their and or but being been with without long short secure ' +
    'safe unsafe mandatory optional needed accepted rejected valid sent asked requested visible shown displayed there here ' +
    'what which where how why when ok okay fine good bad'
  ).split(' '),
)

function findPasswords(text: string, add: Add) {
  for (const m of text.matchAll(PASSWORD_RE)) {
    const keyword = m[1].toLowerCase()
    const separator = m[3]
    const viaIs = !/[:=>]/.test(separator)
    const shortKeyword = keyword === 'pass' || keyword === 'pw'
    if (shortKeyword && viaIs) continue
    let s = m.index + m[0].length
    let e: number
    if (/^\[[A-Z_]+\]/.test(text.slice(s, s + 20))) continue // already a placeholder
    const q = text[s]
    if (q === '"' || q === "'" || q === '`' || q === '“' || q === '‘') {
      const close = q === '“' ? '”' : q === '‘' ? '’' : q
      const ci = text.indexOf(close, s + 1)
      if (ci < 0 || ci - s > 129) continue
      s += 1
      e = ci
    } else {
      e = s
      while (e < text.length && e - s < 128 && !/\s/.test(text[e])) e++
      // sentence punctuation after a value is not part of it ('!' and '?' often are part of passwords)
      while (e - s > 1 && /[.,;:)\]}"'”’]/.test(text[e - 1])) e--
    }
    if (e <= s) continue
    const value = text.slice(s, e)
    if (NOT_A_PASSWORD.has(value.toLowerCase())) continue
    if (shortKeyword && value.length < 4) continue
    if (keyword.startsWith('pin') && !/^\d{3,10}$/.test(value)) continue
    if (viaIs && value.length < 3) continue
    add('PASSWORD', s, e, PRIORITY.PASSWORD)
  }
  for (const m of text.matchAll(URL_USERINFO_RE)) {
    const [s, e] = m.indices![1]
    add('PASSWORD', s, e, PRIORITY.PASSWORD)
  }
}

// ---------------------------------------------------------------------------------------------------------
// ID_DOC (optional)

const SSN_RE = /(?<![\d+-]|[\d+] )(\d{3})([- ])(\d{2})\2(\d{4})(?!\d|-\d)/g
const BARE_SSN_RE = /(?<!\d)(\d{3})(\d{2})(\d{4})(?!\d)/g
const SSN_CONTEXT_RE = /(?:ssn|social\s+security(?:\s+(?:number|no\.?|#))?|ss#)\s*(?:is|:|#|=)?\s*$/i
const ID_KEYWORD_RE = new RegExp(
  String.raw`\b(?:` +
    [
      String.raw`(?<PASSPORT>passport|passeport|reisepass|pasaporte|passaporto|paspoort)`,
      String.raw`(?<DRIVER_LICENSE>driver'?s?\s+licen[cs]e|driving\s+licen[cs]e|licen[cs]e|dl|führerschein|permis\s+de\s+conduire)`,
      String.raw`(?<TAX_ID>tax\s+id(?:entification)?|tin|itin|ein|vat\s+id|steuer-?id|steuernummer|nif|codice\s+fiscale|pan\s+card|pan)`,
      String.raw`(?<NATIONAL_ID>national\s+id(?:entity)?|id\s*card|identity\s+card|identity\s+document|id|nin|nino|national\s+insurance|dni|nie|bsn|pesel|personalausweis|carte\s+d'identit[ée]|aadhaar|sin|cpf|curp|rut|nric|ssn|social\s+security)`,
    ].join('|') +
    String.raw`)(?![\p{L}\p{N}])(?:\s*(?:number|no\.?|nr\.?|num\.?|#|card)(?![\p{L}\p{N}]))?\s{0,3}(?:is(?![\p{L}\p{N}])\s*:?|:|#|=|-)?\s{0,3}`,
  'giu',
)

function findIdDocs(text: string, add: Add) {
  for (const m of text.matchAll(SSN_RE)) {
    if (ssnValid(m[1], m[3], m[4])) add('ID_DOC', m.index, m.index + m[0].length, PRIORITY.ID_DOC, 'SSN')
  }
  for (const m of text.matchAll(BARE_SSN_RE)) {
    if (SSN_CONTEXT_RE.test(text.slice(Math.max(0, m.index - 30), m.index)) && ssnValid(m[1], m[2], m[3])) {
      add('ID_DOC', m.index, m.index + m[0].length, PRIORITY.ID_DOC, 'SSN')
    }
  }
  for (const m of text.matchAll(ID_KEYWORD_RE)) {
    const kind = (Object.entries(m.groups ?? {}).find(([, v]) => v !== undefined)?.[0] ?? 'NATIONAL_ID') as IdDocKind
    const short = m[0].trim().length <= 3 // "id", "dl", "tin", "pan", "sin": only with a separator or "number"
    if (short && !/(?:number|no\.?|nr\.?|num\.?|#|card|:|=|is)\s*$/i.test(m[0])) continue
    // the value: one token with a digit, optionally followed by short groups ("AB 12 34 56 C")
    const rest = text.slice(m.index + m[0].length, m.index + m[0].length + 40)
    const v = /^[A-Za-z0-9][A-Za-z0-9\-/.]{1,23}(?:[ ][A-Za-z0-9]{1,4}){0,4}/.exec(rest)
    if (!v) continue
    let value = trimEndOf(v[0], '.-/')
    // trailing short groups only when they look like part of the number (digits, or one letter at the end)
    const parts = value.split(' ')
    while (parts.length > 1 && !/^(?:\d{1,4}|[A-Z])$/.test(parts[parts.length - 1])) parts.pop()
    value = parts.join(' ')
    if (!/\d/.test(value) || value.replace(/\W/g, '').length < 5) continue
    const start = m.index + m[0].length
    const isSsnShape = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(value)
    add('ID_DOC', start, start + value.length, PRIORITY.ID_DOC, isSsnShape && kind === 'NATIONAL_ID' ? 'SSN' : kind)
  }
}

// ---------------------------------------------------------------------------------------------------------
// IP (optional)

const OCTET = String.raw`(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`
const IPV4_RE = new RegExp(String.raw`(?<![\w.])(?:${OCTET}\.){3}${OCTET}(?!\.?\d|\w)`, 'g')
const IPV6_RE = /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?![\w:])/g
const VERSION_BEFORE_RE = /\b(?:version|ver\.?|v)\s*$/i

function findIps(text: string, add: Add) {
  for (const m of text.matchAll(IPV4_RE)) {
    if (VERSION_BEFORE_RE.test(text.slice(Math.max(0, m.index - 12), m.index))) continue
    add('IP', m.index, m.index + m[0].length, PRIORITY.IP)
  }
  for (const m of text.matchAll(IPV6_RE)) {
    const v = m[0]
    if (!v.includes('::') && v.split(':').length !== 8 && !/\d+\.\d+\.\d+\.\d+$/.test(v)) continue
    if (v.split(':').filter(Boolean).length < 2) continue
    if (isIPv6(v)) add('IP', m.index, m.index + v.length, PRIORITY.IP)
  }
}

// ---------------------------------------------------------------------------------------------------------
// URL_TOKEN (optional)

const URL_PARAM_RE = /[?&;#]([A-Za-z0-9_.-]{1,64})=([^&#\s"'<>]{3,2048})/dg
const SENSITIVE_PARAM_RE =
  /^(?:[\w.-]*[_.-])?(?:token|access_?token|id_?token|refresh_?token|key|apikey|api_?key|sig|signature|code|session|sessionid|session_?id|sid|secret|password|passwd|pwd|auth|otp|jwt|credential|credentials|hash|ticket)(?:[_.-][\w.-]*)?$/i

function findUrlTokens(text: string, add: Add) {
  for (const m of text.matchAll(URL_PARAM_RE)) {
    if (!SENSITIVE_PARAM_RE.test(m[1])) continue
    const [s, e0] = m.indices![2]
    const value = trimEndOf(text.slice(s, e0), '.,;:!?)]')
    if (value.length < 3) continue
    add('URL_TOKEN', s, s + value.length, PRIORITY.URL_TOKEN)
  }
}

// ---------------------------------------------------------------------------------------------------------

/** All PII entities in the text, overlaps resolved, in text order. */
export function detectPii(text: string, opts: RedactOptions = {}): PiiEntity[] {
  const optional = opts.optional ?? new Set<OptionalPiiType>()
  const candidates: Candidate[] = []
  const add: Add = (type, start, end, priority, subtype) => {
    if (end > start) candidates.push(subtype ? { type, start, end, priority, subtype } : { type, start, end, priority })
  }
  findApiKeys(text, add)
  findPasswords(text, add)
  findIbans(text, add)
  findCards(text, add)
  findEmails(text, add)
  findPhones(text, (start, end) => add('PHONE', start, end, PRIORITY.PHONE), phoneRegions(opts.locale))
  if (optional.has('URL_TOKEN')) findUrlTokens(text, add)
  if (optional.has('ID_DOC')) findIdDocs(text, add)
  if (optional.has('IP')) findIps(text, add)

  candidates.sort((a, b) => b.priority - a.priority || b.end - b.start - (a.end - a.start) || a.start - b.start)
  const taken = new Uint8Array(text.length)
  const chosen: PiiEntity[] = []
  outer: for (const c of candidates) {
    for (let i = c.start; i < c.end; i++) if (taken[i]) continue outer
    taken.fill(1, c.start, c.end)
    chosen.push(c.subtype ? { type: c.type, start: c.start, end: c.end, subtype: c.subtype } : { type: c.type, start: c.start, end: c.end })
  }
  return chosen.sort((a, b) => a.start - b.start)
}

/** Replaces every PII entity with its placeholder ([EMAIL], [PHONE] ...). Offsets refer to the original text. */
export function redact(text: string, opts: RedactOptions = {}): RedactResult {
  const entities = detectPii(text, opts)
  const counts: Partial<Record<PiiType, number>> = {}
  let out = ''
  let pos = 0
  for (const e of entities) {
    out += text.slice(pos, e.start) + placeholder(e.type)
    pos = e.end
    counts[e.type] = (counts[e.type] ?? 0) + 1
  }
  out += text.slice(pos)
  return { text: out, entities, counts }
}
