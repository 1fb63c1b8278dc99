/**
 * What the bot says itself around actions (not generated): a write to approve, a call that failed (with a
 * person offered, never silence), and the outcome of an approval. English for languages without a table.
 */
type Key = 'confirm' | 'failed' | 'done' | 'cancelled'
type Table = Record<Key, string>

const en: Table = {
  confirm: 'To do this I need your confirmation: {summary}. Shall I go ahead?',
  failed:
    "Sorry, I couldn't get that done right now because our system did not respond as expected. Would you like me to connect you with a person from our support team?",
  done: 'Done: {summary}.',
  cancelled: "OK, I haven't done it.",
}
const de: Table = {
  confirm: 'Dafür brauche ich Ihre Bestätigung: {summary}. Soll ich fortfahren?',
  failed:
    'Das konnte ich gerade leider nicht erledigen, weil unser System nicht wie erwartet geantwortet hat. Soll ich Sie mit einem Mitarbeiter unseres Support-Teams verbinden?',
  done: 'Erledigt: {summary}.',
  cancelled: 'In Ordnung, ich habe es nicht ausgeführt.',
}
const fr: Table = {
  confirm: "Pour cela, j'ai besoin de votre confirmation : {summary}. Dois-je continuer ?",
  failed:
    "Désolé, je n'ai pas pu le faire pour le moment : notre système n'a pas répondu comme prévu. Voulez-vous que je vous mette en relation avec une personne de notre équipe support ?",
  done: 'C’est fait : {summary}.',
  cancelled: "D'accord, je ne l'ai pas fait.",
}
const es: Table = {
  confirm: 'Para hacerlo necesito su confirmación: {summary}. ¿Continúo?',
  failed:
    'Lo siento, no he podido hacerlo ahora porque nuestro sistema no respondió como esperaba. ¿Quiere que le ponga en contacto con una persona de nuestro equipo de soporte?',
  done: 'Hecho: {summary}.',
  cancelled: 'De acuerdo, no lo he hecho.',
}
const TABLES: Record<string, Table> = { en, de, fr, es }

export const actionText = (key: Key, lang: string, summary = '') => (TABLES[lang] ?? en)[key].replace('{summary}', summary)
