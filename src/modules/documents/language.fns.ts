/**
 * Cheap language detection for the lexical index: which PostgreSQL text-search configuration (regconfig)
 * stems a text best. Script first (Cyrillic, Greek, Arabic...), then frequent function words for Latin
 * scripts. Anything unclear maps to 'simple' (no stemming, no stop words), which is always safe.
 *
 * Indexing and querying must agree: the retrieval side calls `regconfigFor(question, fallback)` with the
 * same logic, typically passing the tenant's dominant chunk language as the fallback for short questions.
 */

/** Configurations present on PostgreSQL 15+ and PGlite alike (estonian is PostgreSQL 17 only, left out). */
export const REGCONFIGS = [
  'simple',
  'arabic',
  'armenian',
  'basque',
  'catalan',
  'danish',
  'dutch',
  'english',
  'finnish',
  'french',
  'german',
  'greek',
  'hindi',
  'hungarian',
  'indonesian',
  'irish',
  'italian',
  'lithuanian',
  'nepali',
  'norwegian',
  'portuguese',
  'romanian',
  'russian',
  'serbian',
  'spanish',
  'swedish',
  'tamil',
  'turkish',
  'yiddish',
] as const
export type Regconfig = (typeof REGCONFIGS)[number]

const REGCONFIG_SET: ReadonlySet<string> = new Set(REGCONFIGS)
export const isRegconfig = (v: unknown): v is Regconfig => typeof v === 'string' && REGCONFIG_SET.has(v)

// Frequent, mostly distinctive function words. Words shared by several languages still count for each;
// the distinctive ones decide.
const STOPWORDS: Record<string, string> = {
  english:
    'the and of to is in that it for you with on are this be as at by not or from have an was can your if will which their there what all when we they how do does should would about into more been has than its these our also only',
  german:
    'der die das und ist nicht ein eine einen dem den des zu mit auf für sich auch wird werden wie oder bei sie ich wir ihr es sind kann können nach noch über aus diese dieser wenn nur haben hat',
  french:
    'le la les et est des une un du dans pour que qui pas sur avec ce cette sont vous nous il elle ils au aux par plus ou être été peut mais comme leur ses votre',
  spanish:
    'el los las del y es una por con para que se no un su al lo como más pero sus le ya está este esta son muy también puede cuando hay donde usted entre sin',
  italian: 'il lo gli della delle dei che è per una un non con sono si le nel nella alla come anche più questo questa può essere ha del al da di ma',
  portuguese: 'o os as do da dos das e é um uma para com não que se em no na por mais como mas ao foi são pode você este esta isso seu sua também ou',
  dutch: 'de het een en is van dat niet te op voor zijn met die er als aan ook om maar bij door kan wordt worden naar hij zij wij u uw deze dit heeft',
  swedish: 'och att det som en på är av för med till den har inte om ett kan de vi du så från eller var jag men också när sig skall ska detta',
  danish: 'og at det som en på er af for med til den har ikke om et kan de vi du så fra eller var jeg men også når sig skal dette hvis være',
  norwegian: 'og at det som en på er av for med til den har ikke om et kan de vi du så fra eller var jeg men også når seg skal dette hvis være ikkje',
  finnish: 'ja on ei se että oli ovat kun myös tai jos mutta niin kuin voi sen hän ne tämä nyt vain mitä ole joka tässä',
  turkish: 've bir bu da de için ile ne çok daha gibi olarak ama var mı ya en olan kadar sonra değil her ise şey',
  hungarian: 'a az és hogy nem is egy van meg de el ez azt mint csak már vagy ha volt lesz kell még itt',
  romanian: 'și în de la cu să nu că este un o pe din pentru care sunt se mai ca sau fi au lui acest',
  indonesian: 'yang dan di ke dari ini itu dengan untuk tidak ada dalam akan pada juga saya anda bisa atau oleh karena',
  catalan: 'el la els les i és de que per amb no un una del al als com més però són seu seva també això aquest',
}

/** word -> languages that use it: one lookup per word whatever the number of languages. */
const WORD_LANGS = new Map<string, string[]>()
for (const [lang, words] of Object.entries(STOPWORDS)) {
  for (const w of words.split(' ')) {
    const list = WORD_LANGS.get(w)
    if (list) list.push(lang)
    else WORD_LANGS.set(w, [lang])
  }
}

// Letters that single out a language among its neighbours: letter -> [language, weight][].
const DIACRITIC_HINTS = new Map<string, [string, number][]>()
for (const [letters, lang, weight] of [
  ['äöüß', 'german', 1],
  ['ãõç', 'portuguese', 1],
  ['ñ¿¡', 'spanish', 2],
  ['ø', 'norwegian', 0.5],
  ['æø', 'danish', 0.5],
  ['åäö', 'swedish', 0.5],
  ['ğış', 'turkish', 2],
  ['őű', 'hungarian', 2],
  ['ăâîșşțţ', 'romanian', 1],
  ['èàòù', 'italian', 0.3],
  ['éèêàç', 'french', 0.3],
] as const) {
  for (const ch of letters) {
    const list = DIACRITIC_HINTS.get(ch) ?? []
    list.push([lang, weight])
    DIACRITIC_HINTS.set(ch, list)
  }
}
const HINT_CHARS = new RegExp(`[${[...DIACRITIC_HINTS.keys()].join('')}]`, 'g')
const MAX_HINTS_PER_LETTER = 20

const SAMPLE_CHARS = 3000

/** The dominant script's configuration, or null when the text is mostly Latin (or has no letters). */
function byScript(sample: string): Regconfig | 'latin' | null {
  let latin = 0
  let cyr = 0
  let greek = 0
  let arabic = 0
  let hebrew = 0
  let deva = 0
  let tamil = 0
  let armenian = 0
  let cjk = 0
  let other = 0
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i)
    if (c < 0x80) {
      if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) latin++
    } else if (c <= 0x024f) latin++
    else if (c >= 0x0370 && c <= 0x03ff) greek++
    else if (c >= 0x0400 && c <= 0x04ff) cyr++
    else if (c >= 0x0530 && c <= 0x058f) armenian++
    else if (c >= 0x0590 && c <= 0x05ff) hebrew++
    else if (c >= 0x0600 && c <= 0x06ff) arabic++
    else if (c >= 0x0900 && c <= 0x097f) deva++
    else if (c >= 0x0b80 && c <= 0x0bff) tamil++
    else if ((c >= 0x3040 && c <= 0x30ff) || (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af)) cjk++
    else if (c >= 0xd800 && c <= 0xdbff)
      i++ // astral plane: emoji, rare scripts
    else if (/\p{L}/u.test(sample[i]!)) other++
  }
  const counts: [string, number][] = [
    ['latin', latin],
    ['cyrillic', cyr],
    ['greek', greek],
    ['arabic', arabic],
    ['hebrew', hebrew],
    ['devanagari', deva],
    ['tamil', tamil],
    ['armenian', armenian],
    ['cjk', cjk],
    ['other', other],
  ]
  counts.sort((a, b) => b[1] - a[1])
  const [script, n] = counts[0]!
  if (n === 0) return null
  switch (script) {
    case 'latin':
      return 'latin'
    case 'cyrillic':
      // Serbian and Ukrainian letters; Ukrainian has no stemmer, so it stays unstemmed.
      if (/[ђћџљњј]/i.test(sample)) return 'serbian'
      if (/[іїєґ]/i.test(sample)) return 'simple'
      return 'russian'
    case 'greek':
      return 'greek'
    case 'arabic':
      return 'arabic'
    case 'hebrew':
      // Yiddish is written in Hebrew letters but Hebrew is not Yiddish; only a few Yiddish spellings decide.
      return /(?:^|\s)(?:און|איז|ניט|נישט|דער|דאס)(?:\s|$)/.test(sample) ? 'yiddish' : 'simple'
    case 'devanagari':
      return 'hindi'
    case 'tamil':
      return 'tamil'
    case 'armenian':
      return 'armenian'
    default:
      return 'simple'
  }
}

/** Scores Latin-script text by function words and telling letters. */
function byWords(sample: string): Regconfig | null {
  const lower = sample.toLowerCase()
  const words = lower.match(/\p{L}+(?:'\p{L}+)?/gu) ?? []
  if (words.length === 0) return null
  const scores = new Map<string, number>()
  for (const w of words) {
    const langs = WORD_LANGS.get(w)
    if (langs) for (const lang of langs) scores.set(lang, (scores.get(lang) ?? 0) + 1)
  }
  const hintCounts = new Map<string, number>()
  for (const ch of lower.match(HINT_CHARS) ?? []) hintCounts.set(ch, (hintCounts.get(ch) ?? 0) + 1)
  for (const [ch, n] of hintCounts) {
    for (const [lang, weight] of DIACRITIC_HINTS.get(ch)!) scores.set(lang, (scores.get(lang) ?? 0) + Math.min(n, MAX_HINTS_PER_LETTER) * weight)
  }
  let best: string | null = null
  let bestScore = 0
  for (const [lang, s] of scores) {
    if (s > bestScore) {
      best = lang
      bestScore = s
    }
  }
  if (!best) return null
  // Short texts need two clear hits; longer ones a share of their words (code and tables have few).
  const needed = words.length < 8 ? 2 : Math.max(2, words.length * 0.06)
  return bestScore >= needed ? (best as Regconfig) : null
}

/**
 * The text-search configuration for `text`; `fallback` (default 'simple') when the text gives no clear
 * signal (too short, code, numbers). Deterministic and cheap: reads at most the first 3,000 characters.
 */
export function regconfigFor(text: string, fallback: Regconfig = 'simple'): Regconfig {
  const sample = text.length > SAMPLE_CHARS ? text.slice(0, SAMPLE_CHARS) : text
  const script = byScript(sample)
  if (script === null) return fallback
  if (script !== 'latin') return script
  return byWords(sample) ?? fallback
}

/** ISO 639-1 codes of the configurations above. */
const LOCALE_CONFIGS: Record<string, Regconfig> = {
  ar: 'arabic',
  hy: 'armenian',
  eu: 'basque',
  ca: 'catalan',
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  el: 'greek',
  hi: 'hindi',
  hu: 'hungarian',
  id: 'indonesian',
  ga: 'irish',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  no: 'norwegian',
  nb: 'norwegian',
  nn: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  es: 'spanish',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  yi: 'yiddish',
}

/**
 * The configuration of a help-centre locale ("de", "en-us", "pt-BR"), or null when it has none: a connector's
 * article is stemmed in the language its help centre says it is written in, not in a guessed one.
 */
export function regconfigForLocale(locale: string | null | undefined): Regconfig | null {
  if (!locale) return null
  return LOCALE_CONFIGS[locale.trim().toLowerCase().split(/[-_]/)[0]!] ?? null
}
