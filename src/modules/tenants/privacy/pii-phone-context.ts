/**
 * The words around a number that say what it is, for the phone detectors in pii-phone.fns.ts: a phone word
 * a few tokens before it ("Mobile:", "call me at", "mi teléfono es") or just after it ("... -Fax",
 * "... office", "... (mobile)"), and identifier words just before it ("order", "Rechnung Nr.") that make it
 * something else. The languages are those src/modules/shared/language.ts detects (English, German, French,
 * Spanish, Italian, Dutch, Portuguese by words; Russian, Arabic, Hebrew, Greek, Chinese, Japanese, Korean by
 * script) and the other European ones it names.
 *
 * Each look is bounded (a slice of at most 60 characters around the number, a few tokens of it), so the cost
 * per number is constant whatever the text.
 */

/** Phone words by language, matched as whole tokens, case-insensitive. Specific ones count before or after a number. */
export const PHONE_WORDS: Readonly<Record<string, string>> = {
  en: 'phone phones phoned telephone tel mobile mobiles cell cellphone cellular fax faxed landline hotline helpline desk office switchboard whatsapp sms',
  de: 'telefon telefonnummer tel handy handynummer mobil mobilnummer mobiltelefon rufnummer festnetz fax telefax faxnummer durchwahl büro zentrale',
  fr: 'téléphone tél tel portable mobile gsm fax télécopie bureau fixe standard',
  es: 'teléfono tel móvil movil celular fax oficina fijo whatsapp',
  it: 'telefono tel cellulare cell fax ufficio fisso',
  nl: 'telefoon telefoonnummer tel mobiel mobielnummer gsm fax kantoor vast',
  pt: 'telefone tel celular telemóvel telemovel fax escritório escritorio fixo',
  pl: 'telefon tel komórka komórkowy faks fax biuro',
  tr: 'telefon tel cep gsm faks ofis',
  sv: 'telefon tel mobil mobilnummer fax kontor',
  da: 'telefon tlf mobil fax kontor',
  no: 'telefon tlf mobil faks kontor',
  fi: 'puhelin puh matkapuhelin kännykkä faksi toimisto',
  cs: 'telefon tel mobil fax kancelář',
  ru: 'телефон тел мобильный моб сотовый факс офис',
  uk: 'телефон тел мобільний моб факс офіс',
  el: 'τηλέφωνο τηλ κινητό φαξ γραφείο',
  ar: 'هاتف جوال موبايل فاكس',
  he: 'טלפון טל נייד פקס',
}

/** Words that name a number to call only when they come before it ("call me at", "number:", "contact"). */
export const PHONE_WORDS_BEFORE_ONLY: Readonly<Record<string, string>> = {
  en: 'call calls called calling dial dialed dialled dialing dialling ring text texts texted texting message messages messaged messaging answer answers answered answering registered contact number no. signal viber telegram',
  de: 'anrufen anruf ruf rufen nummer kontakt erreichbar',
  fr: 'appeler appelez appelle appelle-moi numéro contact joindre',
  es: 'llamar llame llámame llámenos llamanos llama número contacto',
  it: 'chiamare chiama chiamami chiamateci numero contatto',
  nl: 'bellen bel belt nummer contact',
  pt: 'ligar ligue liga número numero contato contacto',
  pl: 'dzwoń zadzwoń numer kontakt',
  tr: 'arayın ara numara',
  sv: 'ring ringa nummer',
  fi: 'soita numero',
  cs: 'volejte zavolejte číslo',
  ru: 'звоните позвоните номер',
  uk: 'дзвоніть зателефонуйте номер',
  el: 'αριθμός τηλεφωνήστε',
  ar: 'رقم اتصل',
  he: 'מספר התקשר',
}

/** Scripts written without spaces: a phone word anywhere in the few characters next to the number. */
const CJK_PHONE_WORD_RE = /电话|電話|手机|手機|传真|傳真|號碼|号码|联系|聯絡|携帯|ファックス|番号|전화|휴대폰|핸드폰|팩스|번호|연락처|TEL|FAX/i

const words = (lists: Readonly<Record<string, string>>) => new Set(Object.values(lists).flatMap((s) => s.split(' ')))
const SPECIFIC = words(PHONE_WORDS)
const BEFORE_ONLY = words(PHONE_WORDS_BEFORE_ONLY)
/** Compounds and inflections that start like a phone word (Telefonnummer, téléphonique, WhatsApp-Nummer, cellulari). */
const SPECIFIC_STEMS =
  /^(?:telefon|telephon|téléphon|teléfon|telefoon|whatsapp|handy|mobilnummer|mobiltelefon|faxnummer|cellula|celular|телефон|мобильн|мобільн|τηλέφων|puhelin)/
/** "reach" is a phone word only when someone is reached ("reach me at", "reachable on"). */
const REACH_RE = /^reach(?:ed|able)?$/
const REACH_NEXT = new Set(['me', 'us', 'him', 'her', 'them', 'at', 'on', 'out', 'via', 'under'])
/** Which line of someone's, as a label ("Home: 0123 ...", "direct line 0123 ..."): a phone word only so. */
const LINE_LABELS = new Set([
  'home',
  'work',
  'private',
  'business',
  'direct',
  'main',
  'privat',
  'geschäftlich',
  'dienstlich',
  'domicile',
  'travail',
  'casa',
  'trabajo',
  'lavoro',
  'thuis',
  'werk',
])

/** Tokens of a slice: words (with a trailing dot, as "tel." and "no." are written), digit runs, line breaks, other marks. */
const TOKEN_RE = /\p{L}[\p{L}\p{M}]*\.?|\p{N}+|\n|[^\s\p{L}\p{N}]/gu

function isSpecific(w: string): boolean {
  if (SPECIFIC.has(w) || (w.endsWith('.') && SPECIFIC.has(w.slice(0, -1)))) return true
  return (w.length > 4 && SPECIFIC_STEMS.test(w)) || (w.charCodeAt(0) > 0x2e7f && CJK_PHONE_WORD_RE.test(w))
}
const isBeforeOnly = (w: string) => BEFORE_ONLY.has(w) || (w.endsWith('.') && BEFORE_ONLY.has(w.slice(0, -1)))

/** What a token is, by its first character: a word, a number, a line break, or another mark. */
function kind(t: string): 'word' | 'number' | 'newline' | 'mark' {
  const c = t.charCodeAt(0)
  if (c >= 0x30 && c <= 0x39) return 'number'
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) return 'word'
  if (c === 0x0a) return 'newline'
  if (c < 0x80) return 'mark'
  return /^\p{L}/u.test(t) ? 'word' : /^\p{N}/u.test(t) ? 'number' : 'mark'
}

/**
 * A phone word within three words before `start`, with no other number between them ("Phone: 0123 ...",
 * "please call me at 0123 ...") but those of a list right after it ("tel 0123 456, 0123 457"); a label alone
 * on the line above counts ("Phone:\n0123 ...").
 */
export function phoneWordBefore(text: string, start: number): boolean {
  const tokens =
    text
      .slice(Math.max(0, start - 60), start)
      .toLowerCase()
      .match(TOKEN_RE) ?? []
  let seen = 0
  for (let k = tokens.length - 1; k >= 0; k--) {
    const t = tokens[k]
    const what = kind(t)
    if (what === 'newline') {
      if (seen > 0) return false
      continue
    }
    // another number between: only the list the number is in ("tel 0123 456 789, 0123 456 790")
    if (what === 'number') {
      if (seen === 0) continue
      return false
    }
    if (what === 'mark') {
      if (t === '!' || t === '?' || t === ';') return false
      continue
    }
    if (isSpecific(t) || isBeforeOnly(t)) return true
    if (REACH_RE.test(t) && REACH_NEXT.has(tokens[k + 1] ?? '')) return true
    if (LINE_LABELS.has(t) && /^(?::|line|number|phone)$/.test(tokens[k + 1] ?? '')) return true
    if (++seen >= 3) return false
  }
  return false
}

/** "... is my cell", "... is our office number": the number named in a short clause after it. */
const AFTER_CLAUSE_RE =
  /^\s*(?:is|was|=)\s+(?:my|our|the|his|her|their|a)\s+(?:new\s+|old\s+|private\s+|work\s+|office\s+|home\s+|direct\s+|mobile\s+)?(?:cell|mobile|phone|number|landline|line|fax|whatsapp)\b/i

/**
 * A phone word within two words after `end` on the same line ("... -Fax", "... (mobile)", "... office"),
 * or a clause naming it ("... is my cell"). A word that is itself the label of what follows ("Fax:",
 * "mobile 0123 ...") belongs to the next value, not to this one.
 */
export function phoneWordAfter(text: string, end: number): boolean {
  const after = text.slice(end, end + 60)
  if (AFTER_CLAUSE_RE.test(after)) return true
  TOKEN_RE.lastIndex = 0
  let seen = 0
  for (let m = TOKEN_RE.exec(after); m; m = TOKEN_RE.exec(after)) {
    const t = m[0].toLowerCase()
    const what = kind(t)
    if (what === 'newline' || what === 'number' || (what === 'mark' && '.!?;:='.includes(t))) return false
    if (what === 'mark') continue
    if (isSpecific(t)) return !/^[\s)\]]*(?::|\+|\(?\d)/.test(after.slice(m.index + m[0].length))
    if (++seen >= 2) return false
  }
  return false
}

/** Words for a place rather than a line ("office 40123" can be a room): not enough for a short number. */
const PLACE_WORDS =
  /^(?:desk|office|bureau|büro|oficina|ufficio|kantoor|escritório|escritorio|biuro|kontor|toimisto|kancelář|ofis|офис|офіс|γραφείο|zentrale|standard|switchboard)$/

/**
 * A phone word right next to the number, no other word between ("Mobile: 21 12 34", "Fax 401234",
 * "212 345 (mobile)"): what a number too short to be taken on a nearby word alone needs.
 */
export function phoneLabelAdjacent(text: string, start: number, end: number): boolean {
  const before = /(\p{L}[\p{L}\p{M}]*)\.?[\s:.(\-–]*$/u.exec(text.slice(Math.max(0, start - 30), start))
  if (before && isSpecific(before[1].toLowerCase()) && !PLACE_WORDS.test(before[1].toLowerCase())) return true
  if (AFTER_CLAUSE_RE.test(text.slice(end, end + 60))) return true
  const after = /^[\s(\-–]*(\p{L}[\p{L}\p{M}]*)/u.exec(text.slice(end, end + 30))
  return after !== null && isSpecific(after[1].toLowerCase()) && !PLACE_WORDS.test(after[1].toLowerCase()) && phoneWordAfter(text, end)
}

/** Identifier and address words just before a number (several languages): it is that, not a phone. */
const IDENTIFIER_BEFORE_RE = new RegExp(
  String.raw`(?:(?<!\p{L})(?:order|invoice|inv|ref|reference|tracking|account|acct|ticket|case|id|sku|serial|customer|member|transaction|confirmation|booking|po|iban|card|cc|zip|postal|postcode|pin|isbn|version|ver|v|build|release|model|part|batch|lot|receipt|policy|claim|code|licen[cs]e|passport|security|ssn|social|tax|vat|registration|unit|apt|apartment|suite|box|room|flight|page|item|article|art|` +
    String.raw`bestell\p{L}*|bestellung|rechnung\p{L}*|auftrag\p{L}*|kunden\p{L}*|vertrag\p{L}*|sendung\p{L}*|artikel\p{L}*|konto\p{L}*|kto|blz|bic|swift|lieferschein|aktenzeichen|vorgang\p{L}*|` +
    String.raw`commande|facture|référence|dossier|contrat|colis|compte|pedido|factura|referencia|expediente|cliente|contrato|cuenta|ordine|fattura|riferimento|pratica|conto|` +
    String.raw`bestelling|factuur|referentie|klant\p{L}*|encomenda|fatura|referência|zamówienie|faktura|заказ|счёт|счет|договор)` +
    String.raw`\s*(?:number|nummer|numéro|numero|número|num|no|nr|n°|nº|#)?\.?(?:\s+(?:is|was|ist|est|es|é|è))?\s*[:#=]?\s*|#\s*)$`,
  'iu',
)
/** German compounds ending in -nummer / -nr. that are not phone words (Kundennummer, Sendungsnr.). */
const COMPOUND_NUMBER_RE = /(?<!\p{L})(\p{L}+)(?:nummer|nr\.?)\s*[:#]?\s*$/iu

export function identifierBefore(text: string, start: number): boolean {
  const before = text.slice(Math.max(0, start - 40), start)
  if (IDENTIFIER_BEFORE_RE.test(before)) return true
  const compound = COMPOUND_NUMBER_RE.exec(before)
  return compound !== null && !isSpecific(compound[1].toLowerCase()) && !/^(?:telefon|handy|ruf|fax|mobil|festnetz|durchwahl|telefax|tel)$/i.test(compound[1])
}
