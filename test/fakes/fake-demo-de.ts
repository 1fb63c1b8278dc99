import type { FakeMessage } from './fake-llm.js'

/**
 * The demo model's German (issue 52, item 11): a stand-in for a model that reads and writes German, built from the
 * demo help centre itself (scripts/demo/help) and nothing else. It reads a German question through a glossary of
 * the help centre's terms (so it finds the English page that answers it), writes the English sentences it picked
 * in German from a table of those pages' sentences translated by hand, and translates an agent's message the same
 * way: sentence by sentence from that table and a few everyday phrases of support replies. A sentence it has no
 * translation for stays as written; a message it cannot translate at all comes back unchanged, and the product
 * then says it sent the message as written (src/modules/languages/operator-translate.ts).
 */

/** The help centre's sentences, headings and titles (and the demo FAQ, the honest "I am checking" reply) in German. */
const SENTENCES: [string, string][] = [
  // api-keys.html
  ['API keys and server-to-server chat', 'API-Schlüssel und Chat von Server zu Server'],
  [
    'Your backend can ask the bot questions directly with a widget API key in the X-API-Key header.',
    'Ihr Backend kann dem Bot mit einem Widget-API-Schlüssel im Header X-API-Key direkt Fragen stellen.',
  ],
  ['Rotating a key', 'Einen Schlüssel rotieren'],
  ['Rotating an API key issues a new key at once.', 'Wenn Sie einen API-Schlüssel rotieren, wird sofort ein neuer Schlüssel ausgestellt.'],
  [
    'The old key keeps working for 24 hours so you can deploy the new one, unless you choose to revoke it immediately.',
    'Der alte Schlüssel funktioniert noch 24 Stunden weiter, damit Sie den neuen einsetzen können, es sei denn, Sie widerrufen ihn sofort.',
  ],
  ['Retrying safely', 'Sicher wiederholen'],
  [
    'Send an Idempotency-Key header with each question: a retry with the same key within 24 hours gets the first answer again instead of a second one.',
    'Senden Sie mit jeder Frage einen Header Idempotency-Key: Eine Wiederholung mit demselben Schlüssel innerhalb von 24 Stunden erhält wieder die erste Antwort statt einer zweiten.',
  ],
  // getting-started.html
  ['Getting started', 'Erste Schritte'],
  [
    'Support Chatbot answers your visitors from your own documentation and opens a support ticket when it cannot help.',
    'Support Chatbot beantwortet die Fragen Ihrer Besucher aus Ihrer eigenen Dokumentation und eröffnet ein Support-Ticket, wenn er nicht helfen kann.',
  ],
  ['Create your workspace', 'Ihren Arbeitsbereich anlegen'],
  [
    'Register with your e-mail address and a password of at least 8 characters with an upper-case letter, a digit and a special character.',
    'Registrieren Sie sich mit Ihrer E-Mail-Adresse und einem Passwort aus mindestens 8 Zeichen mit einem Großbuchstaben, einer Ziffer und einem Sonderzeichen.',
  ],
  [
    'We send you a verification e-mail; the link in it is valid for 48 hours.',
    'Wir senden Ihnen eine Bestätigungs-E-Mail; der Link darin ist 48 Stunden gültig.',
  ],
  [
    'Verifying your e-mail creates your workspace, its first widget API key and a default bot.',
    'Die Bestätigung Ihrer E-Mail legt Ihren Arbeitsbereich, seinen ersten Widget-API-Schlüssel und einen Standard-Bot an.',
  ],
  ['The API key is shown only once, so keep it somewhere safe.', 'Der API-Schlüssel wird nur einmal angezeigt; bewahren Sie ihn also sicher auf.'],
  ['Connect a language model', 'Ein Sprachmodell anbinden'],
  ['Each workspace brings its own language-model key.', 'Jeder Arbeitsbereich bringt seinen eigenen Sprachmodell-Schlüssel mit.'],
  [
    'Add it in the workspace settings; it is stored encrypted and only its last characters are ever shown again.',
    'Fügen Sie ihn in den Einstellungen des Arbeitsbereichs hinzu; er wird verschlüsselt gespeichert, und nur seine letzten Zeichen werden je wieder angezeigt.',
  ],
  // knowledge.html
  ['Adding knowledge', 'Wissen hinzufügen'],
  ['The bot only answers from what you teach it, so start here.', 'Der Bot antwortet nur aus dem, was Sie ihm beibringen; beginnen Sie also hier.'],
  ['Supported formats', 'Unterstützte Formate'],
  [
    'You can upload PDF, Markdown, MDX, Word (docx and doc), plain text, JSON and YAML files.',
    'Sie können PDF-, Markdown-, MDX-, Word- (docx und doc), Text-, JSON- und YAML-Dateien hochladen.',
  ],
  ['OpenAPI files are indexed operation by operation.', 'OpenAPI-Dateien werden Operation für Operation indexiert.'],
  [
    'A single file may be up to 20 MB, and a workspace can hold 500 documents.',
    'Eine einzelne Datei darf bis zu 20 MB groß sein, und ein Arbeitsbereich kann 500 Dokumente enthalten.',
  ],
  [
    'Each document gets a health score from 0 to 100 that warns about empty, garbled or very long sections.',
    'Jedes Dokument erhält eine Qualitätsbewertung von 0 bis 100, die vor leeren, verstümmelten oder sehr langen Abschnitten warnt.',
  ],
  ['Crawling a website', 'Eine Website crawlen'],
  [
    'Add a website address as a URL source and the crawler reads its pages, following links up to three levels deep and respecting robots.txt.',
    'Fügen Sie eine Website-Adresse als URL-Quelle hinzu, und der Crawler liest ihre Seiten, folgt Links bis zu drei Ebenen tief und beachtet robots.txt.',
  ],
  [
    'Sources are crawled again daily, weekly or only when you press refresh; a manual refresh is available once an hour.',
    'Quellen werden täglich, wöchentlich oder nur auf Knopfdruck neu gecrawlt; eine manuelle Aktualisierung ist einmal pro Stunde möglich.',
  ],
  // privacy.html
  ['Privacy and personal data', 'Datenschutz und personenbezogene Daten'],
  [
    'Personal data in visitor messages is redacted before it reaches the language model.',
    'Personenbezogene Daten in Nachrichten von Besuchern werden geschwärzt, bevor sie das Sprachmodell erreichen.',
  ],
  ['What is redacted', 'Was geschwärzt wird'],
  [
    'E-mail addresses, phone numbers, card numbers, API keys and passwords are always redacted.',
    'E-Mail-Adressen, Telefonnummern, Kartennummern, API-Schlüssel und Passwörter werden immer geschwärzt.',
  ],
  [
    'Identity document numbers, IP addresses and tokens in links are redacted unless you switch them off.',
    'Ausweisnummern, IP-Adressen und Tokens in Links werden geschwärzt, sofern Sie das nicht abschalten.',
  ],
  ['Retention', 'Aufbewahrung'],
  [
    'The audit trail of redactions is kept for 365 days unless you set a shorter retention.',
    'Das Protokoll der Schwärzungen wird 365 Tage aufbewahrt, sofern Sie keine kürzere Aufbewahrungsdauer festlegen.',
  ],
  // tickets.html
  ['Support tickets and human hand-off', 'Support-Tickets und Übergabe an einen Menschen'],
  [
    'When the bot cannot answer, or a visitor asks for a person, a support ticket is opened with the conversation attached.',
    'Wenn der Bot nicht antworten kann oder ein Besucher nach einem Menschen fragt, wird ein Support-Ticket mit dem Gespräch eröffnet.',
  ],
  ['Ticket numbers', 'Ticketnummern'],
  ['Tickets are numbered per workspace, starting at ESC-0001.', 'Tickets werden pro Arbeitsbereich nummeriert, beginnend bei ESC-0001.'],
  ['Each ticket has a priority of low, medium, high or critical.', 'Jedes Ticket hat eine Priorität: niedrig, mittel, hoch oder kritisch.'],
  ['Replying to a visitor', 'Einem Besucher antworten'],
  [
    'Resolve a ticket with your reply and it appears in the visitor chat straight away.',
    'Schließen Sie ein Ticket mit Ihrer Antwort ab, und sie erscheint sofort im Chat des Besuchers.',
  ],
  [
    'If the visitor has not read it within 10 minutes, the reply is also sent by e-mail.',
    'Hat der Besucher sie nicht innerhalb von 10 Minuten gelesen, wird die Antwort auch per E-Mail gesendet.',
  ],
  // widget.html
  ['Embedding the chat widget', 'Das Chat-Widget einbetten'],
  [
    'Paste one script tag into your pages and the chat bubble appears in the bottom corner.',
    'Fügen Sie ein script-Tag in Ihre Seiten ein, und die Chat-Blase erscheint in der unteren Ecke.',
  ],
  ['The snippet', 'Das Snippet'],
  ['before the closing body tag.', 'vor dem schließenden body-Tag ein.'],
  [
    'The data-bot-id attribute is the public id of your bot, which starts with ch_.',
    'Das Attribut data-bot-id ist die öffentliche ID Ihres Bots; sie beginnt mit ch_.',
  ],
  ['Allowed domains', 'Erlaubte Domains'],
  [
    'List the websites that may use your bot in its allowed domains.',
    'Tragen Sie die Websites, die Ihren Bot verwenden dürfen, in seine erlaubten Domains ein.',
  ],
  [
    'A bot with allowed domains only answers pages on those hosts and their subdomains.',
    'Ein Bot mit erlaubten Domains antwortet nur Seiten auf diesen Hosts und ihren Subdomains.',
  ],
  ['For local development you can allow localhost.', 'Für die lokale Entwicklung können Sie localhost erlauben.'],
  ['Languages', 'Sprachen'],
  [
    'The widget follows the browser language for its buttons and the bot answers in the language of the question.',
    'Das Widget folgt bei seinen Schaltflächen der Sprache des Browsers, und der Bot antwortet in der Sprache der Frage.',
  ],
  // the demo's FAQ (scripts/demo.ts)
  ['How do I contact support?', 'Wie erreiche ich den Support?'],
  [
    'Write to support@example.com or ask the bot for a person: it opens a ticket and an operator replies in the chat.',
    'Schreiben Sie an support@example.com oder bitten Sie den Bot um einen Menschen: Er eröffnet ein Ticket, und ein Mitarbeiter antwortet im Chat.',
  ],
  // the demo's honest suggestion (fake-demo.ts) and everyday phrases of an agent's reply
  ['Thanks for your patience.', 'Danke für Ihre Geduld.'],
  ['I am checking this for you and will get back to you here shortly.', 'Ich prüfe das für Sie und melde mich hier in Kürze.'],
  ['Is there anything else I can help you with?', 'Kann ich Ihnen sonst noch helfen?'],
  ['Thank you for your message.', 'Vielen Dank für Ihre Nachricht.'],
  ['Thanks for waiting.', 'Danke fürs Warten.'],
  ['I hope this helps.', 'Ich hoffe, das hilft.'],
  ['Best regards', 'Viele Grüße'],
  ['Kind regards', 'Freundliche Grüße'],
  ['Thanks', 'Danke'],
  ['Thank you', 'Vielen Dank'],
  ['Hello', 'Hallo'],
  ['Hi', 'Hallo'],
]

const norm = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase()
/** Longest first, so a sentence is replaced before a phrase inside it. */
const TO_GERMAN = [...SENTENCES].sort((a, b) => b[0].length - a[0].length)
const GERMAN_OF = new Map(SENTENCES.map(([en, de]) => [norm(en), de]))

/**
 * German words of the help centre's topics and of questions about them, read as the English words the pages use
 * (lower case; a compound gives its parts). A word not listed is kept as it is (names, codes: "localhost", "PDF").
 */
const GLOSSARY: Record<string, string> = {
  welche: 'which',
  welcher: 'which',
  welches: 'which',
  was: 'what',
  wie: 'how',
  wo: 'where',
  wann: 'when',
  warum: 'why',
  wer: 'who',
  kann: 'can',
  können: 'can',
  darf: 'may',
  ich: 'I',
  wir: 'we',
  mein: 'my',
  meine: 'my',
  meinen: 'my',
  meinem: 'my',
  dateitypen: 'file types',
  dateiformate: 'file formats',
  formate: 'formats',
  format: 'format',
  dateien: 'files',
  datei: 'file',
  dokumente: 'documents',
  dokument: 'document',
  hochladen: 'upload',
  lade: 'upload',
  laden: 'upload',
  unterstützt: 'supported',
  lange: 'long',
  oft: 'often',
  viele: 'many',
  groß: 'large',
  größe: 'size',
  funktioniert: 'keeps working',
  gilt: 'valid',
  gültig: 'valid',
  alte: 'old',
  alter: 'old',
  alten: 'old',
  neue: 'new',
  neuen: 'new',
  'api-schlüssel': 'API key',
  schlüssel: 'key',
  rotation: 'rotation',
  rotieren: 'rotating',
  nach: 'after',
  wird: 'is',
  werden: 'are',
  ist: 'is',
  antwort: 'reply',
  antworten: 'reply',
  betreiber: 'operator',
  mitarbeiter: 'operator',
  operator: 'operator',
  'e-mail': 'e-mail',
  email: 'e-mail',
  mail: 'e-mail',
  gesendet: 'sent',
  geschickt: 'sent',
  verschickt: 'sent',
  per: 'by',
  widget: 'widget',
  'chat-widget': 'chat widget',
  verwenden: 'use',
  benutzen: 'use',
  nutzen: 'use',
  auf: 'on',
  einbetten: 'embedding',
  einbettungscode: 'snippet',
  snippet: 'snippet',
  finden: 'find',
  finde: 'find',
  ticket: 'ticket',
  tickets: 'tickets',
  ticketnummer: 'ticket number',
  ticketnummern: 'ticket numbers',
  nummern: 'numbers',
  priorität: 'priority',
  mensch: 'person',
  menschen: 'person',
  person: 'person',
  datenschutz: 'privacy',
  personenbezogene: 'personal',
  daten: 'data',
  geschwärzt: 'redacted',
  schwärzen: 'redact',
  aufbewahrung: 'retention',
  aufbewahrt: 'kept',
  website: 'website',
  webseite: 'website',
  seiten: 'pages',
  crawlen: 'crawl',
  gecrawlt: 'crawled',
  aktualisieren: 'refresh',
  aktualisierung: 'refresh',
  passwort: 'password',
  zeichen: 'characters',
  registrieren: 'register',
  arbeitsbereich: 'workspace',
  sprachmodell: 'language model',
  modell: 'model',
  erlaubte: 'allowed',
  erlauben: 'allow',
  domains: 'domains',
  domain: 'domain',
  sprache: 'language',
  sprachen: 'languages',
  besucher: 'visitor',
  minuten: 'minutes',
  stunden: 'hours',
  bestätigung: 'verification',
  bestätigungs: 'verification',
  link: 'link',
  support: 'support',
  erreichen: 'contact',
  erreiche: 'contact',
  kontakt: 'contact',
  sprechen: 'talk',
}

/** German function words: with them a question is read as German (the glossary's own words are checked too). */
const GERMAN_WORDS = new Set(
  'ich du sie wir ihr der die das den dem des ein eine einen einem einer ist sind wird werden kann können nicht und oder mit für auf nach wie was wo wann welche welcher welches mein meine bitte danke hallo gibt es'.split(
    ' ',
  ),
)

const wordsOf = (text: string) => text.toLowerCase().match(/[a-zäöüß0-9][a-zäöüß0-9_.-]*/g) ?? []

/** Whether a visitor's text reads as German: umlauts or ß, or two German function words. */
export function readsAsGerman(text: string): boolean {
  if (/[äöüß]/i.test(text)) return true
  return wordsOf(text).filter((w) => GERMAN_WORDS.has(w)).length >= 2
}

/**
 * A German question in the help centre's English words, for the search and the answer: each word through the
 * glossary, German function words dropped, the rest (names, codes) kept. Not German: the text as it is.
 */
export function questionInEnglish(text: string): string {
  if (!readsAsGerman(text)) return text
  const out: string[] = []
  for (const w of wordsOf(text.replace(/[.,;:!?]+(?=\s|$)/g, ' '))) {
    const hit = GLOSSARY[w] ?? GLOSSARY[w.replace(/-/g, '')]
    if (hit) out.push(hit)
    else if (!GERMAN_WORDS.has(w)) out.push(w)
  }
  const english = out.join(' ').trim()
  return english ? `${english}${/\?\s*$/.test(text) ? '?' : ''}` : text
}

/**
 * English into German as the stand-in can: every sentence or phrase of the table replaced where it occurs, the
 * rest as written. Citations ([1]), links, codes and numbers stay as they are.
 */
export function toGerman(text: string): string {
  const whole = GERMAN_OF.get(norm(text))
  if (whole) return whole
  // a cited page is named by its title as it is ("API keys and server-to-server chat · Support Chatbot help (url)")
  const kept: string[] = []
  let out = text.replace(/[^\n.;:]* · [^\n(.]+(?: \([^)\s]*\))?/g, (title) => `\u0000${kept.push(title) - 1}\u0000`)
  for (const [en, de] of TO_GERMAN) {
    if (en.length < 12) continue
    if (out.includes(en)) out = out.split(en).join(de)
  }
  out = out.replace(/\u0000(\d+)\u0000/g, (_, i: string) => kept[Number(i)]!)
  // a greeting or sign-off on a line of its own ("Hi Jane,", "Best regards,")
  out = out
    .split('\n')
    .map((line) => {
      const m = /^(\s*)(Hi|Hello|Thanks|Thank you|Best regards|Kind regards)\b(.*)$/.exec(line)
      if (!m || m[3]!.length > 30) return line
      return `${m[1]}${GERMAN_OF.get(norm(m[2]!))}${m[3]}`
    })
    .join('\n')
  return out
}

/** The language a prompt asks the answer in ("Reply in German, …", "Write in German, …"), as a lower-case name. */
export function askedLanguage(messages: FakeMessage[]): string | null {
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n')
  const m = /\b(?:Reply|Write) in ([A-Z][a-z]+)(?:,|\.)/.exec(system)
  return m ? m[1]!.toLowerCase() : null
}

/**
 * The demo model's translations (the chat's question translation and an operator's message sent translated): a
 * German question into the help centre's English words, an English message into German from the table; any other
 * pair comes back as written (the product then sends an operator's message as written and says so).
 */
export function demoTranslation(messages: FakeMessage[], question: string): string | undefined {
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n')
  const m = /Translate the (visitor's|support team's) message into ([A-Z][a-z]+)/.exec(system)
  if (!m) return undefined
  const to = m[2]!.toLowerCase()
  if (to === 'english') return questionInEnglish(question)
  if (to === 'german') return toGerman(question)
  return question
}
