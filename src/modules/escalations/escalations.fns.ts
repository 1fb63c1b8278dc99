import type { TicketPriority, TicketTrigger, TranscriptEntry } from '../../db/schema/chat.js'
import { message } from '../shared/messages/catalogue.js'
import { detectPii } from '../tenants/privacy/pii.fns.js'

/**
 * Pure pieces of the operator workflow: what the bot says after a hand-off (asking for an e-mail, "anything
 * else?"), recognising a visitor's "no" and e-mail, and the texts of the ticket notification and of the
 * operator-reply mail. The visitor's texts come from the message catalogue (eight languages, #40); the team's
 * notification labels are here, in five; anything else gets English.
 */

export type FollowUpKey = 'ask_email' | 'anything_else' | 'email_saved' | 'email_declined' | 'goodbye'

/** The hand-off's follow-up questions, from the message catalogue (#40) in the session's language. */
export const followUpText = (key: FollowUpKey, lang: string) => message(lang, `handoff.${key}`)

/** What the session waits for after a hand-off: the visitor's e-mail when no address is known, else "anything else?". */
export const awaitingAfterHandOff = (emailKnown: boolean): 'email' | 'anything_else' => (emailKnown ? 'anything_else' : 'email')

// "no" and its polite variants, alone or combined ("no, thanks", "nein danke, das ist alles")
const NEGATIVE = [
  'no',
  'nope',
  'nah',
  'no more',
  'not really',
  'not now',
  'nothing',
  'nothing else',
  'nothing more',
  "that's all",
  'that is all',
  "that's it",
  'that is it',
  "i'm good",
  'i am good',
  "i'm fine",
  'all good',
  "i'm done",
  'no further questions',
  'nein',
  'nichts',
  'nichts mehr',
  'nichts weiter',
  'sonst nichts',
  'das ist alles',
  "das war's",
  'das war es',
  'das wärs',
  "das wär's",
  'non',
  'rien',
  "rien d'autre",
  'rien de plus',
  "c'est tout",
  'ça ira',
  'ca ira',
  'nada',
  'nada más',
  'nada mas',
  'eso es todo',
  'es todo',
  'ya está',
  'ya esta',
  'нет',
  'неа',
  'ничего',
  'больше ничего',
  'ничего больше',
  'это всё',
  'это все',
  'всё',
  'пока нет',
]
const POLITE = [
  'thanks',
  'thank you',
  'thx',
  'ty',
  'cheers',
  'bye',
  'goodbye',
  'for now',
  'all set',
  'danke',
  'danke schön',
  'danke schon',
  'vielen dank',
  'tschüss',
  'tschüs',
  'auf wiedersehen',
  'merci',
  'merci beaucoup',
  'au revoir',
  'gracias',
  'muchas gracias',
  'adiós',
  'adios',
  'hasta luego',
  'спасибо',
  'спасибо большое',
  'большое спасибо',
  'пока',
  'до свидания',
]
const alt = (list: string[]) =>
  list
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .sort((a, b) => b.length - a.length)
    .join('|')
const NEGATIVE_RE = new RegExp(`^(?:${alt(NEGATIVE)})(?: (?:${alt(NEGATIVE)}|${alt(POLITE)}))*$`, 'u')

/** True when the visitor's whole message is a "no" (in en/de/fr/es/ru), optionally with thanks or a goodbye. */
export function isNegativeReply(text: string): boolean {
  if (text.length > 80) return false
  const t = text
    .toLowerCase()
    .replace(/[’`´]/g, "'")
    .replace(/[^\p{L}\p{N}' ]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  return t.length > 0 && NEGATIVE_RE.test(t)
}

/** The first e-mail address in the visitor's (original) text, found by the same detector that redacts it. */
export function extractEmail(original: string): string | null {
  const e = detectPii(original).find((x) => x.type === 'EMAIL')
  if (!e) return null
  const email = original.slice(e.start, e.end).trim()
  return email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) ? email : null
}

// --- mails ---

interface MailLabels {
  new_ticket: string
  priority: string
  trigger: string
  question: string
  note: string
  visitor: string
  anonymous: string
  bot: string
  transcript: string
  evidence: string
  open: string
  email_added_subject: string
  email_added_body: string
  roles: Record<string, string>
  triggers: Record<TicketTrigger, string>
  priorities: Record<TicketPriority, string>
}

const MAIL: Record<string, MailLabels> = {
  en: {
    new_ticket: 'New support ticket',
    priority: 'Priority',
    trigger: 'Reason',
    question: 'Question',
    note: "Visitor's note",
    visitor: 'Visitor',
    anonymous: 'anonymous (no e-mail known yet)',
    bot: 'Bot',
    transcript: 'Conversation (personal data redacted)',
    evidence: 'Best matches in the knowledge base',
    open: 'Open the ticket',
    email_added_subject: 'the visitor left an e-mail address',
    email_added_body: 'The visitor left an e-mail address for this ticket; replying to this mail reaches them.',
    roles: { user: 'Visitor', assistant: 'Bot', operator: 'Operator' },
    triggers: {
      user_request: 'the visitor asked for a person',
      answer_rejected: 'the visitor rejected the answer',
      llm_unavailable: 'the assistant was unavailable',
      low_similarity: 'no good match in the documentation',
      no_documents: 'no documentation yet',
      email_draft: 'the e-mail bot is in draft mode: its answer waits for you',
    },
    priorities: { low: 'low', medium: 'medium', high: 'high', critical: 'critical' },
  },
  de: {
    new_ticket: 'Neues Support-Ticket',
    priority: 'Priorität',
    trigger: 'Grund',
    question: 'Frage',
    note: 'Notiz des Besuchers',
    visitor: 'Besucher',
    anonymous: 'anonym (noch keine E-Mail-Adresse)',
    bot: 'Bot',
    transcript: 'Gespräch (personenbezogene Daten entfernt)',
    evidence: 'Beste Treffer in der Wissensbasis',
    open: 'Ticket öffnen',
    email_added_subject: 'der Besucher hat eine E-Mail-Adresse hinterlassen',
    email_added_body: 'Der Besucher hat für dieses Ticket eine E-Mail-Adresse hinterlassen; eine Antwort auf diese Mail erreicht ihn.',
    roles: { user: 'Besucher', assistant: 'Bot', operator: 'Mitarbeiter' },
    triggers: {
      user_request: 'der Besucher wollte einen Menschen sprechen',
      answer_rejected: 'der Besucher hat die Antwort abgelehnt',
      llm_unavailable: 'der Assistent war nicht verfügbar',
      low_similarity: 'kein guter Treffer in der Dokumentation',
      no_documents: 'noch keine Dokumentation',
      email_draft: 'der E-Mail-Bot ist im Entwurfsmodus: seine Antwort wartet auf Sie',
    },
    priorities: { low: 'niedrig', medium: 'mittel', high: 'hoch', critical: 'kritisch' },
  },
  fr: {
    new_ticket: 'Nouveau ticket de support',
    priority: 'Priorité',
    trigger: 'Motif',
    question: 'Question',
    note: 'Note du visiteur',
    visitor: 'Visiteur',
    anonymous: 'anonyme (pas encore d’adresse e-mail)',
    bot: 'Bot',
    transcript: 'Conversation (données personnelles masquées)',
    evidence: 'Meilleures correspondances dans la base de connaissances',
    open: 'Ouvrir le ticket',
    email_added_subject: 'le visiteur a laissé une adresse e-mail',
    email_added_body: 'Le visiteur a laissé une adresse e-mail pour ce ticket ; répondre à ce message lui parviendra.',
    roles: { user: 'Visiteur', assistant: 'Bot', operator: 'Opérateur' },
    triggers: {
      user_request: 'le visiteur a demandé une personne',
      answer_rejected: 'le visiteur a rejeté la réponse',
      llm_unavailable: "l'assistant était indisponible",
      low_similarity: 'aucune bonne correspondance dans la documentation',
      no_documents: 'pas encore de documentation',
      email_draft: 'le bot e-mail est en mode brouillon : sa réponse vous attend',
    },
    priorities: { low: 'basse', medium: 'moyenne', high: 'haute', critical: 'critique' },
  },
  es: {
    new_ticket: 'Nuevo ticket de soporte',
    priority: 'Prioridad',
    trigger: 'Motivo',
    question: 'Pregunta',
    note: 'Nota del visitante',
    visitor: 'Visitante',
    anonymous: 'anónimo (aún sin correo electrónico)',
    bot: 'Bot',
    transcript: 'Conversación (datos personales ocultos)',
    evidence: 'Mejores coincidencias en la base de conocimiento',
    open: 'Abrir el ticket',
    email_added_subject: 'el visitante dejó una dirección de correo',
    email_added_body: 'El visitante dejó una dirección de correo para este ticket; responder a este mensaje le llegará.',
    roles: { user: 'Visitante', assistant: 'Bot', operator: 'Operador' },
    triggers: {
      user_request: 'el visitante pidió hablar con una persona',
      answer_rejected: 'el visitante rechazó la respuesta',
      llm_unavailable: 'el asistente no estaba disponible',
      low_similarity: 'ninguna buena coincidencia en la documentación',
      no_documents: 'aún no hay documentación',
      email_draft: 'el bot de correo está en modo borrador: su respuesta le espera',
    },
    priorities: { low: 'baja', medium: 'media', high: 'alta', critical: 'crítica' },
  },
  ru: {
    new_ticket: 'Новое обращение в поддержку',
    priority: 'Приоритет',
    trigger: 'Причина',
    question: 'Вопрос',
    note: 'Комментарий посетителя',
    visitor: 'Посетитель',
    anonymous: 'аноним (e-mail пока неизвестен)',
    bot: 'Бот',
    transcript: 'Разговор (персональные данные скрыты)',
    evidence: 'Лучшие совпадения в базе знаний',
    open: 'Открыть обращение',
    email_added_subject: 'посетитель оставил адрес e-mail',
    email_added_body: 'Посетитель оставил адрес e-mail для этого обращения; ответ на это письмо дойдёт до него.',
    roles: { user: 'Посетитель', assistant: 'Бот', operator: 'Оператор' },
    triggers: {
      user_request: 'посетитель попросил человека',
      answer_rejected: 'посетитель отклонил ответ',
      llm_unavailable: 'ассистент был недоступен',
      low_similarity: 'нет хорошего совпадения в документации',
      no_documents: 'документации пока нет',
      email_draft: 'почтовый бот в режиме черновика: его ответ ждёт вас',
    },
    priorities: { low: 'низкий', medium: 'средний', high: 'высокий', critical: 'критический' },
  },
}

/** "de-CH" -> the German labels; a language without labels gets English. */
export function mailLanguage(tag: string | null | undefined): string {
  const lang = /^([a-z]{2,3})\b/i.exec(tag ?? '')?.[1]?.toLowerCase()
  return lang && lang in MAIL ? lang : 'en'
}

const oneLine = (s: string, max: number) => {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > max ? `${t.slice(0, max - 1)}…` : t
}

export interface NotificationTicket {
  ticket_number: string
  priority: TicketPriority
  trigger: TicketTrigger
  /** Redacted. */
  primary_question: string
  transcript: TranscriptEntry[]
  user_note: string | null
  user_email: string | null
  user_name: string | null
  user_id: string | null
  plan: string | null
  bot_name: string | null
  evidence: { title?: unknown; confidence?: unknown }[]
}

/** Subject: priority, ticket number and the (redacted) question, e.g. "[HIGH] ESC-0003: Where is my invoice?". */
export function notificationSubject(t: Pick<NotificationTicket, 'priority' | 'ticket_number' | 'primary_question'>): string {
  return `[${t.priority.toUpperCase()}] ${t.ticket_number}: ${oneLine(t.primary_question, 120)}`
}

/** The operator's notification of a new ticket: who, why, the question and the redacted conversation. */
export function notificationMail(t: NotificationTicket, opts: { language: string; link: string | null }) {
  const L = MAIL[opts.language] ?? MAIL.en!
  const who = t.user_email || t.user_name || t.user_id
  const visitor = who
    ? [t.user_name, t.user_email ? `<${t.user_email}>` : null, t.user_id ? `(id ${t.user_id}${t.plan ? `, ${t.plan}` : ''})` : null].filter(Boolean).join(' ')
    : L.anonymous
  const lines = [
    `${L.new_ticket} ${t.ticket_number}`,
    '',
    `${L.priority}: ${L.priorities[t.priority]}`,
    `${L.trigger}: ${L.triggers[t.trigger]}`,
    `${L.visitor}: ${visitor}`,
    ...(t.bot_name ? [`${L.bot}: ${t.bot_name}`] : []),
    '',
    `${L.question}:`,
    t.primary_question,
  ]
  if (t.user_note) lines.push('', `${L.note}:`, t.user_note)
  if (t.transcript.length) {
    lines.push('', `${L.transcript}:`)
    for (const m of t.transcript.slice(-50)) lines.push(`[${m.created_at.slice(0, 16).replace('T', ' ')}] ${L.roles[m.role] ?? m.role}: ${m.content}`)
  }
  const ev = t.evidence.filter((e) => typeof e.title === 'string' && e.title).slice(0, 5)
  if (ev.length) {
    lines.push('', `${L.evidence}:`)
    for (const e of ev) lines.push(`- ${e.title}${typeof e.confidence === 'number' ? ` (${e.confidence.toFixed(2)})` : ''}`)
  }
  if (opts.link) lines.push('', `${L.open}: ${opts.link}`)
  return { subject: notificationSubject(t), text: `${lines.join('\n')}\n` }
}

export function emailAddedMail(
  t: Pick<NotificationTicket, 'ticket_number' | 'priority' | 'primary_question'>,
  opts: { language: string; link: string | null },
) {
  const L = MAIL[opts.language] ?? MAIL.en!
  const text = [L.email_added_body, '', `${L.question}:`, t.primary_question, ...(opts.link ? ['', `${L.open}: ${opts.link}`] : [])].join('\n')
  return { subject: `[${t.priority.toUpperCase()}] ${t.ticket_number}: ${L.email_added_subject}`, text: `${text}\n` }
}

/** The operator's reply as mailed to a visitor who did not read it in the chat. */
export function operatorReplyMail(p: { ticket_number: string; reply: string; question: string; language: string }) {
  // the visitor's fixed texts come from the message catalogue (#40), in the session's language
  const say = (key: 'email.reply_subject' | 'email.reply_intro' | 'email.reply_question' | 'email.reply_outro') =>
    message(p.language, key, { ticket: p.ticket_number })
  const text = [
    say('email.reply_intro'),
    '',
    p.reply,
    '',
    '—',
    `${say('email.reply_question')}: ${oneLine(p.question, 500)}`,
    '',
    say('email.reply_outro'),
  ].join('\n')
  return { subject: say('email.reply_subject'), text: `${text}\n` }
}

/**
 * An operator's reply to a customer who wrote by e-mail: the words as the member wrote them, signed with the
 * member's name, and nothing else (no chat notice: there is no chat). The subject is a fallback; the e-mail
 * channel puts the mail in the thread (`Re:` the first subject) and adds the bot's signature.
 */
export function emailReplyMail(p: { ticket_number: string; reply: string; author: string }) {
  return { subject: `Re: ${p.ticket_number}`, text: `${p.reply.trim()}\n\n${p.author}\n` }
}
