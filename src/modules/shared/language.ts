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

/** A language code for the text, or null when it is too short or mixed to tell. */
export function detectLanguage(text: string): string | null {
  const letters = text.replace(/[^\p{L}]/gu, '')
  if (letters.length < 2) return null
  const share = (re: RegExp) => (letters.match(re)?.length ?? 0) / letters.length
  if (share(/[\u3040-\u30ff]/g) > 0.1) return 'ja'
  if (share(/[\uac00-\ud7af]/g) > 0.3) return 'ko'
  if (share(/[\u4e00-\u9fff]/g) > 0.3) return 'zh'
  if (share(/[\u0400-\u04ff]/g) > 0.5) return /[іїєґ]/i.test(text) ? 'uk' : 'ru'
  if (share(/[\u0600-\u06ff]/g) > 0.5) return 'ar'
  if (share(/[\u0590-\u05ff]/g) > 0.5) return 'he'
  if (share(/[\u0370-\u03ff]/g) > 0.5) return 'el'
  const words = text.toLowerCase().match(/[\p{L}']+/gu) ?? []
  if (words.length < 2) return null
  let best: string | null = null
  let bestHits = 0
  let second = 0
  for (const [lang, list] of Object.entries(FUNCTION_WORDS)) {
    const set = new Set(list)
    let hits = 0
    for (const w of words) if (set.has(w)) hits++
    if (hits > bestHits) {
      second = bestHits
      bestHits = hits
      best = lang
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
