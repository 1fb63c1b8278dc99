/**
 * The texts the bot says itself (not generated): refusals, greetings, hand-offs. In the languages the
 * widget speaks; anything else gets English. `{bot}` and `{ticket}` are filled in.
 */

export type CannedKey =
  | 'refuse_injection'
  | 'refuse_off_topic'
  | 'greeting'
  | 'thanks'
  | 'escalated_no_answer'
  | 'escalated_user_request'
  | 'escalated_existing'
  | 'escalated_llm_unavailable'
  | 'escalated_answer_rejected'
  | 'escalated_manual'
  | 'chat_ended'
  | 'unverified_fallback'
  | 'unverified_note'
  | 'interrupted_note'

type Table = Record<CannedKey, string>

const en: Table = {
  refuse_injection: "I can't help with that. I'm here to answer questions about {bot} and its products and services.",
  refuse_off_topic: 'I can only help with questions about {bot} and its products and services. Is there something along those lines I can help you with?',
  greeting: 'Hello! How can I help you today?',
  thanks: "You're welcome! Is there anything else I can help you with?",
  escalated_no_answer: "I couldn't find an answer to this in our documentation, so I've passed your question to our support team. Your ticket number is {ticket}.",
  escalated_user_request: "I've passed your request to our support team, and a person will get back to you. Your ticket number is {ticket}.",
  escalated_existing: "I've added this to your open support ticket {ticket}; our team will get back to you.",
  escalated_llm_unavailable: "Our assistant is temporarily unavailable, so I've passed your question to our support team. Your ticket number is {ticket}.",
  escalated_answer_rejected: "Sorry that didn't help. I've passed your question to our support team. Your ticket number is {ticket}.",
  escalated_manual: 'Your conversation has been handed over to our support team. Your ticket number is {ticket}.',
  chat_ended: 'This conversation has ended. Please start a new chat if you need more help.',
  unverified_fallback: "I'm not confident I can answer this correctly from our documentation. Would you like me to connect you with a person from our support team?",
  unverified_note: "Please note: I couldn't fully verify this answer against our documentation. If it matters, ask me to connect you with a person from our support team.",
  interrupted_note: 'Sorry, my answer was interrupted. Please ask again, or ask me to connect you with a person from our support team.',
}

const de: Table = {
  refuse_injection: 'Dabei kann ich nicht helfen. Ich beantworte Fragen zu {bot} und seinen Produkten und Leistungen.',
  refuse_off_topic: 'Ich kann nur Fragen zu {bot} und seinen Produkten und Leistungen beantworten. Kann ich Ihnen dabei helfen?',
  greeting: 'Hallo! Wie kann ich Ihnen helfen?',
  thanks: 'Gern geschehen! Kann ich Ihnen sonst noch helfen?',
  escalated_no_answer: 'Dazu habe ich in unserer Dokumentation keine Antwort gefunden, deshalb habe ich Ihre Frage an unser Support-Team weitergeleitet. Ihre Ticketnummer lautet {ticket}.',
  escalated_user_request: 'Ich habe Ihre Anfrage an unser Support-Team weitergeleitet; ein Mitarbeiter meldet sich bei Ihnen. Ihre Ticketnummer lautet {ticket}.',
  escalated_existing: 'Ich habe dies zu Ihrem offenen Support-Ticket {ticket} hinzugefügt; unser Team meldet sich bei Ihnen.',
  escalated_llm_unavailable: 'Unser Assistent ist vorübergehend nicht verfügbar, deshalb habe ich Ihre Frage an unser Support-Team weitergeleitet. Ihre Ticketnummer lautet {ticket}.',
  escalated_answer_rejected: 'Das tut mir leid. Ich habe Ihre Frage an unser Support-Team weitergeleitet. Ihre Ticketnummer lautet {ticket}.',
  escalated_manual: 'Ihr Gespräch wurde an unser Support-Team übergeben. Ihre Ticketnummer lautet {ticket}.',
  chat_ended: 'Dieses Gespräch ist beendet. Bitte starten Sie einen neuen Chat, wenn Sie weitere Hilfe brauchen.',
  unverified_fallback: 'Ich bin nicht sicher, ob ich das anhand unserer Dokumentation richtig beantworten kann. Soll ich Sie mit einem Mitarbeiter unseres Support-Teams verbinden?',
  unverified_note: 'Hinweis: Ich konnte diese Antwort nicht vollständig anhand unserer Dokumentation prüfen. Wenn es wichtig ist, bitten Sie mich, Sie mit einem Mitarbeiter zu verbinden.',
  interrupted_note: 'Entschuldigung, meine Antwort wurde unterbrochen. Bitte fragen Sie noch einmal oder lassen Sie sich mit einem Mitarbeiter verbinden.',
}

const fr: Table = {
  refuse_injection: "Je ne peux pas vous aider avec cela. Je réponds aux questions sur {bot} et ses produits et services.",
  refuse_off_topic: "Je ne peux répondre qu'aux questions sur {bot} et ses produits et services. Puis-je vous aider à ce sujet ?",
  greeting: 'Bonjour ! Comment puis-je vous aider ?',
  thanks: 'Avec plaisir ! Puis-je vous aider pour autre chose ?',
  escalated_no_answer: "Je n'ai pas trouvé de réponse dans notre documentation, j'ai donc transmis votre question à notre équipe support. Votre numéro de ticket est {ticket}.",
  escalated_user_request: "J'ai transmis votre demande à notre équipe support ; une personne vous répondra. Votre numéro de ticket est {ticket}.",
  escalated_existing: "J'ai ajouté ceci à votre ticket ouvert {ticket} ; notre équipe vous répondra.",
  escalated_llm_unavailable: "Notre assistant est momentanément indisponible, j'ai donc transmis votre question à notre équipe support. Votre numéro de ticket est {ticket}.",
  escalated_answer_rejected: "Désolé que cela ne vous ait pas aidé. J'ai transmis votre question à notre équipe support. Votre numéro de ticket est {ticket}.",
  escalated_manual: 'Votre conversation a été transmise à notre équipe support. Votre numéro de ticket est {ticket}.',
  chat_ended: "Cette conversation est terminée. Démarrez une nouvelle discussion si vous avez besoin d'aide.",
  unverified_fallback: "Je ne suis pas certain de pouvoir répondre correctement à partir de notre documentation. Voulez-vous que je vous mette en relation avec une personne de notre équipe support ?",
  unverified_note: "Remarque : je n'ai pas pu vérifier entièrement cette réponse dans notre documentation. Si c'est important, demandez-moi de vous mettre en relation avec une personne.",
  interrupted_note: 'Désolé, ma réponse a été interrompue. Posez à nouveau votre question ou demandez à parler à une personne.',
}

const es: Table = {
  refuse_injection: 'No puedo ayudar con eso. Respondo preguntas sobre {bot} y sus productos y servicios.',
  refuse_off_topic: 'Solo puedo responder preguntas sobre {bot} y sus productos y servicios. ¿Puedo ayudarle con algo de eso?',
  greeting: '¡Hola! ¿En qué puedo ayudarle?',
  thanks: '¡De nada! ¿Puedo ayudarle con algo más?',
  escalated_no_answer: 'No encontré una respuesta en nuestra documentación, así que he enviado su pregunta a nuestro equipo de soporte. Su número de ticket es {ticket}.',
  escalated_user_request: 'He enviado su solicitud a nuestro equipo de soporte; una persona se pondrá en contacto con usted. Su número de ticket es {ticket}.',
  escalated_existing: 'He añadido esto a su ticket abierto {ticket}; nuestro equipo se pondrá en contacto con usted.',
  escalated_llm_unavailable: 'Nuestro asistente no está disponible en este momento, así que he enviado su pregunta a nuestro equipo de soporte. Su número de ticket es {ticket}.',
  escalated_answer_rejected: 'Lamento que no le haya ayudado. He enviado su pregunta a nuestro equipo de soporte. Su número de ticket es {ticket}.',
  escalated_manual: 'Su conversación ha sido transferida a nuestro equipo de soporte. Su número de ticket es {ticket}.',
  chat_ended: 'Esta conversación ha terminado. Inicie un nuevo chat si necesita más ayuda.',
  unverified_fallback: 'No estoy seguro de poder responder correctamente con nuestra documentación. ¿Quiere que le ponga en contacto con una persona de nuestro equipo de soporte?',
  unverified_note: 'Nota: no pude verificar por completo esta respuesta con nuestra documentación. Si es importante, pídame que le ponga en contacto con una persona.',
  interrupted_note: 'Lo siento, mi respuesta se interrumpió. Vuelva a preguntar o pida hablar con una persona.',
}

const ru: Table = {
  refuse_injection: 'С этим я помочь не могу. Я отвечаю на вопросы о {bot}, его продуктах и услугах.',
  refuse_off_topic: 'Я могу отвечать только на вопросы о {bot}, его продуктах и услугах. Могу ли я помочь вам с чем-то из этого?',
  greeting: 'Здравствуйте! Чем могу помочь?',
  thanks: 'Пожалуйста! Могу ли я помочь чем-то ещё?',
  escalated_no_answer: 'Я не нашёл ответа в нашей документации, поэтому передал ваш вопрос в службу поддержки. Номер вашего обращения: {ticket}.',
  escalated_user_request: 'Я передал ваш запрос в службу поддержки, с вами свяжется сотрудник. Номер вашего обращения: {ticket}.',
  escalated_existing: 'Я добавил это в ваше открытое обращение {ticket}; наша команда свяжется с вами.',
  escalated_llm_unavailable: 'Наш ассистент временно недоступен, поэтому я передал ваш вопрос в службу поддержки. Номер вашего обращения: {ticket}.',
  escalated_answer_rejected: 'Жаль, что это не помогло. Я передал ваш вопрос в службу поддержки. Номер вашего обращения: {ticket}.',
  escalated_manual: 'Ваш разговор передан в службу поддержки. Номер вашего обращения: {ticket}.',
  chat_ended: 'Этот разговор завершён. Начните новый чат, если вам нужна помощь.',
  unverified_fallback: 'Я не уверен, что могу правильно ответить на основе нашей документации. Соединить вас с сотрудником службы поддержки?',
  unverified_note: 'Обратите внимание: я не смог полностью проверить этот ответ по нашей документации. Если это важно, попросите соединить вас с сотрудником.',
  interrupted_note: 'Извините, мой ответ прервался. Спросите ещё раз или попросите соединить вас с сотрудником.',
}

const TABLES: Record<string, Table> = { en, de, fr, es, ru }

export function canned(key: CannedKey, lang: string, vars: { bot?: string; ticket?: string } = {}): string {
  const t = (TABLES[lang] ?? en)[key]
  return t.replace('{bot}', vars.bot ?? 'us').replace('{ticket}', vars.ticket ?? '')
}

export const hasCannedLanguage = (lang: string) => lang in TABLES
