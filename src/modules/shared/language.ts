/**
 * The visitor's language: detected from the question when it is clear enough, else the browser locale
 * (X-Browser-Locale / the widget's locale), else English. Detection is deliberately small: scripts, then
 * function words of the languages the canned texts exist in; the answer model itself is told to reply in
 * the visitor's language, so this mostly picks the canned texts and states a hint in the prompt.
 */

export const LANGUAGE_NAMES: Record<string, string> = {
  en: 'English',
  de: 'German',
  fr: 'French',
  es: 'Spanish',
  it: 'Italian',
  nl: 'Dutch',
  pt: 'Portuguese',
  ru: 'Russian',
  uk: 'Ukrainian',
  pl: 'Polish',
  ja: 'Japanese',
  zh: 'Chinese',
  ko: 'Korean',
  ar: 'Arabic',
  he: 'Hebrew',
  el: 'Greek',
  tr: 'Turkish',
  sv: 'Swedish',
  da: 'Danish',
  no: 'Norwegian',
  fi: 'Finnish',
  cs: 'Czech',
}

const FUNCTION_WORDS: Record<string, string[]> = {
  en: [
    'the',
    'is',
    'are',
    'how',
    'what',
    'can',
    'do',
    'does',
    'my',
    'i',
    'you',
    'to',
    'of',
    'and',
    'in',
    'for',
    'with',
    'it',
    'where',
    'why',
    'when',
    'which',
    'have',
    'get',
    'not',
    // the article, shared with Portuguese, Spanish and Italian: alone it no longer tips "whats a vpn" to Portuguese
    'a',
    'who',
    // contractions as visitors type them, without the apostrophe
    'whats',
    'whos',
    'hows',
    'wheres',
    'dont',
    'doesnt',
    'didnt',
    'cant',
    'isnt',
    'wont',
    'youre',
    'theres',
  ],
  de: [
    'der',
    'die',
    'das',
    'ist',
    'sind',
    'wie',
    'was',
    'kann',
    'ich',
    'mein',
    'meine',
    'sie',
    'und',
    'nicht',
    'mit',
    'für',
    'ein',
    'eine',
    'wo',
    'warum',
    'wann',
    'bei',
    'auf',
    'zu',
    'es',
    'gibt',
    'ihr',
  ],
  fr: [
    'le',
    'la',
    'les',
    'est',
    'sont',
    'comment',
    'quoi',
    'que',
    'qui',
    'je',
    'mon',
    'ma',
    'mes',
    'vous',
    'et',
    'pas',
    'avec',
    'pour',
    'un',
    'une',
    'des',
    'où',
    'pourquoi',
    'quand',
    'du',
    'au',
    'puis',
    'il',
  ],
  es: [
    'el',
    'la',
    'los',
    'las',
    'es',
    'son',
    'cómo',
    'como',
    'qué',
    'que',
    'puedo',
    'mi',
    'mis',
    'yo',
    'usted',
    'y',
    'no',
    'con',
    'para',
    'un',
    'una',
    'dónde',
    'por',
    'cuándo',
    'del',
    'al',
    'hay',
  ],
  it: [
    'il',
    'lo',
    'la',
    'gli',
    'le',
    'è',
    'sono',
    'come',
    'cosa',
    'che',
    'posso',
    'mio',
    'mia',
    'io',
    'e',
    'non',
    'con',
    'per',
    'un',
    'una',
    'dove',
    'perché',
    'quando',
    'del',
    'della',
  ],
  nl: [
    'de',
    'het',
    'een',
    'is',
    'zijn',
    'hoe',
    'wat',
    'kan',
    'ik',
    'mijn',
    'u',
    'jij',
    'en',
    'niet',
    'met',
    'voor',
    'waar',
    'waarom',
    'wanneer',
    'van',
    'op',
    'er',
  ],
  pt: [
    'o',
    'a',
    'os',
    'as',
    'é',
    'são',
    'como',
    'que',
    'posso',
    'meu',
    'minha',
    'eu',
    'você',
    'e',
    'não',
    'com',
    'para',
    'um',
    'uma',
    'onde',
    'por',
    'quando',
    'do',
    'da',
  ],
}

/** Each function word's languages, in FUNCTION_WORDS' order (built once: the floor detects 7 texts a turn). */
const WORD_LANGS = (() => {
  const langs = Object.keys(FUNCTION_WORDS)
  const m = new Map<string, number[]>()
  langs.forEach((lang, i) => {
    for (const w of new Set(FUNCTION_WORDS[lang])) m.set(w, [...(m.get(w) ?? []), i])
  })
  return { langs, m, longest: Math.max(...[...m.keys()].map((w) => w.length)) }
})()

/** Script ranges (UTF-16 code units) told apart before function words, with the share of letters each needs. */
const SCRIPTS: { lo: number; hi: number; share: number; lang: string }[] = [
  { lo: 0x3040, hi: 0x30ff, share: 0.1, lang: 'ja' },
  { lo: 0xac00, hi: 0xd7af, share: 0.3, lang: 'ko' },
  { lo: 0x4e00, hi: 0x9fff, share: 0.3, lang: 'zh' },
  { lo: 0x0400, hi: 0x04ff, share: 0.5, lang: 'ru' },
  { lo: 0x0600, hi: 0x06ff, share: 0.5, lang: 'ar' },
  { lo: 0x0590, hi: 0x05ff, share: 0.5, lang: 'he' },
  { lo: 0x0370, hi: 0x03ff, share: 0.5, lang: 'el' },
]

const LETTER = /^\p{L}$/u

/** UTF-16 length of the letter starting at `i` of `s` (2 for an astral one), 0 when no letter starts there. */
function letterAt(s: string, i: number): number {
  const c = s.charCodeAt(i)
  if (c < 0x80) return (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a ? 1 : 0
  const cp = s.codePointAt(i)!
  const n = cp > 0xffff ? 2 : 1
  return LETTER.test(s.slice(i, i + n)) ? n : 0
}

/**
 * A language code for the text, or null when it is too short or mixed to tell. Hand-rolled scans instead of
 * regular expressions over the whole text, and only words short enough to be function words taken out of it:
 * the relevance floor runs this on the question and on up to 1,500 characters of each top chunk every turn.
 */
export function detectLanguage(text: string): string | null {
  // letters as /\p{L}/u sees them, counted in UTF-16 units, and those of each script
  let letters = 0
  const inScript = new Array<number>(SCRIPTS.length).fill(0)
  for (let i = 0; i < text.length; ) {
    const n = letterAt(text, i)
    if (n === 0) {
      i += text.codePointAt(i)! > 0xffff ? 2 : 1
      continue
    }
    letters += n
    const c = text.charCodeAt(i)
    if (n === 1 && c >= 0x0370) for (let j = 0; j < SCRIPTS.length; j++) if (c >= SCRIPTS[j]!.lo && c <= SCRIPTS[j]!.hi) inScript[j]!++
    i += n
  }
  if (letters < 2) return null
  for (let j = 0; j < SCRIPTS.length; j++) {
    if (inScript[j]! / letters <= SCRIPTS[j]!.share) continue
    const lang = SCRIPTS[j]!.lang
    return lang === 'ru' && /[іїєґ]/i.test(text) ? 'uk' : lang
  }
  // words as /[\p{L}']+/gu finds them in the lower-cased text; only the short ones can be function words
  const lower = text.toLowerCase()
  let words = 0
  const hitsOf = new Array<number>(WORD_LANGS.langs.length).fill(0)
  for (let i = 0; i < lower.length; ) {
    const start = i
    for (;;) {
      if (i >= lower.length) break
      if (lower.charCodeAt(i) === 0x27) i++
      else {
        const n = letterAt(lower, i)
        if (n === 0) break
        i += n
      }
    }
    if (i === start) {
      i += lower.codePointAt(i)! > 0xffff ? 2 : 1
      continue
    }
    words++
    if (i - start > WORD_LANGS.longest) continue
    for (const l of WORD_LANGS.m.get(lower.slice(start, i)) ?? []) hitsOf[l]!++
  }
  if (words < 2) return null
  let best: string | null = null
  let bestHits = 0
  let second = 0
  for (let i = 0; i < hitsOf.length; i++) {
    const hits = hitsOf[i]!
    if (hits > bestHits) {
      second = bestHits
      bestHits = hits
      best = WORD_LANGS.langs[i]!
    } else if (hits > second) second = hits
  }
  // umlauts and ß are German, ñ and ¿ Spanish, ç and œ French: enough on their own in short questions
  if (/[äöüß]/i.test(text) && bestHits <= 1) return 'de'
  if (/[ñ¿¡]/i.test(text) && bestHits <= 1) return 'es'
  if (/[çœ]/i.test(text) && bestHits <= 1) return 'fr'
  return bestHits >= 1 && bestHits > second ? best : null
}

/** "de-DE" -> "de"; null for anything that is not a language tag. */
export function localeLanguage(locale: string | null | undefined): string | null {
  const m = /^([a-z]{2,3})(?:[-_][A-Za-z0-9]{1,8})*$/i.exec((locale ?? '').trim())
  return m ? m[1]!.toLowerCase() : null
}

export function visitorLanguage(question: string, locale: string | null | undefined): string {
  return detectLanguage(question) ?? localeLanguage(locale) ?? 'en'
}

export const languageName = (code: string) => LANGUAGE_NAMES[code] ?? code

/** Lower case without diacritics, so "Überweisung" and a lexeme "uberweis" meet. */
export function foldText(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
}
