/**
 * What the bot says when it hands a conversation to the support team (a ticket opened or added to), in
 * the languages the widget speaks; anything else gets English. `{ticket}` is filled in.
 */

export type HandOffKey = 'no_answer' | 'user_request' | 'existing' | 'llm_unavailable' | 'answer_rejected' | 'manual'

type Table = Record<HandOffKey, string>

const en: Table = {
  no_answer:
    "Our documentation doesn't cover this, so I couldn't find an answer to it. I've passed your question to a person on our support team. Your ticket number is {ticket}.",
  user_request: "I've passed your request to our support team, and a person will get back to you. Your ticket number is {ticket}.",
  existing: "I've added this to your open support ticket {ticket}; our team will get back to you.",
  llm_unavailable: "Our assistant is temporarily unavailable, so I've passed your question to our support team. Your ticket number is {ticket}.",
  answer_rejected: "Sorry that didn't help. I've passed your question to our support team. Your ticket number is {ticket}.",
  manual: 'Your conversation has been handed over to our support team. Your ticket number is {ticket}.',
}

const de: Table = {
  no_answer:
    'Unsere Dokumentation deckt das nicht ab, deshalb habe ich keine Antwort gefunden. Ich habe Ihre Frage an einen Mitarbeiter unseres Support-Teams weitergeleitet. Ihre Ticketnummer lautet {ticket}.',
  user_request: 'Ich habe Ihre Anfrage an unser Support-Team weitergeleitet; ein Mitarbeiter meldet sich bei Ihnen. Ihre Ticketnummer lautet {ticket}.',
  existing: 'Ich habe dies zu Ihrem offenen Support-Ticket {ticket} hinzugefügt; unser Team meldet sich bei Ihnen.',
  llm_unavailable:
    'Unser Assistent ist vorübergehend nicht verfügbar, deshalb habe ich Ihre Frage an unser Support-Team weitergeleitet. Ihre Ticketnummer lautet {ticket}.',
  answer_rejected: 'Das tut mir leid. Ich habe Ihre Frage an unser Support-Team weitergeleitet. Ihre Ticketnummer lautet {ticket}.',
  manual: 'Ihr Gespräch wurde an unser Support-Team übergeben. Ihre Ticketnummer lautet {ticket}.',
}

const fr: Table = {
  no_answer:
    "Notre documentation ne couvre pas ce sujet, je n'ai donc pas trouvé de réponse. J'ai transmis votre question à une personne de notre équipe support. Votre numéro de ticket est {ticket}.",
  user_request: "J'ai transmis votre demande à notre équipe support ; une personne vous répondra. Votre numéro de ticket est {ticket}.",
  existing: "J'ai ajouté ceci à votre ticket ouvert {ticket} ; notre équipe vous répondra.",
  llm_unavailable:
    "Notre assistant est momentanément indisponible, j'ai donc transmis votre question à notre équipe support. Votre numéro de ticket est {ticket}.",
  answer_rejected: "Désolé que cela ne vous ait pas aidé. J'ai transmis votre question à notre équipe support. Votre numéro de ticket est {ticket}.",
  manual: 'Votre conversation a été transmise à notre équipe support. Votre numéro de ticket est {ticket}.',
}

const es: Table = {
  no_answer:
    'Nuestra documentación no cubre este tema, así que no encontré una respuesta. He enviado su pregunta a una persona de nuestro equipo de soporte. Su número de ticket es {ticket}.',
  user_request: 'He enviado su solicitud a nuestro equipo de soporte; una persona se pondrá en contacto con usted. Su número de ticket es {ticket}.',
  existing: 'He añadido esto a su ticket abierto {ticket}; nuestro equipo se pondrá en contacto con usted.',
  llm_unavailable:
    'Nuestro asistente no está disponible en este momento, así que he enviado su pregunta a nuestro equipo de soporte. Su número de ticket es {ticket}.',
  answer_rejected: 'Lamento que no le haya ayudado. He enviado su pregunta a nuestro equipo de soporte. Su número de ticket es {ticket}.',
  manual: 'Su conversación ha sido transferida a nuestro equipo de soporte. Su número de ticket es {ticket}.',
}

const ru: Table = {
  no_answer:
    'Наша документация не охватывает этот вопрос, поэтому я не нашёл ответа. Я передал ваш вопрос сотруднику службы поддержки. Номер вашего обращения: {ticket}.',
  user_request: 'Я передал ваш запрос в службу поддержки, с вами свяжется сотрудник. Номер вашего обращения: {ticket}.',
  existing: 'Я добавил это в ваше открытое обращение {ticket}; наша команда свяжется с вами.',
  llm_unavailable: 'Наш ассистент временно недоступен, поэтому я передал ваш вопрос в службу поддержки. Номер вашего обращения: {ticket}.',
  answer_rejected: 'Жаль, что это не помогло. Я передал ваш вопрос в службу поддержки. Номер вашего обращения: {ticket}.',
  manual: 'Ваш разговор передан в службу поддержки. Номер вашего обращения: {ticket}.',
}

const TABLES: Record<string, Table> = { en, de, fr, es, ru }

export const handOffText = (key: HandOffKey, lang: string, ticket: string) => (TABLES[lang] ?? en)[key].replace('{ticket}', ticket)
