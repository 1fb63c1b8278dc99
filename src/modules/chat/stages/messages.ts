/**
 * The texts the bot says itself (not generated): refusals, greetings, notes. In the languages the widget
 * speaks; anything else gets English. `{bot}` is filled in. The hand-off texts are the escalations module's.
 */

export type CannedKey =
  | 'refuse_injection'
  | 'refuse_off_topic'
  | 'greeting'
  | 'thanks'
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
  chat_ended: 'This conversation has ended. Please start a new chat if you need more help.',
  unverified_fallback:
    "I'm not confident I can answer this correctly from our documentation. Would you like me to connect you with a person from our support team?",
  unverified_note:
    "Please note: I couldn't fully verify this answer against our documentation. If it matters, ask me to connect you with a person from our support team.",
  interrupted_note: 'Sorry, my answer was interrupted. Please ask again, or ask me to connect you with a person from our support team.',
}

const de: Table = {
  refuse_injection: 'Dabei kann ich nicht helfen. Ich beantworte Fragen zu {bot} und seinen Produkten und Leistungen.',
  refuse_off_topic: 'Ich kann nur Fragen zu {bot} und seinen Produkten und Leistungen beantworten. Kann ich Ihnen dabei helfen?',
  greeting: 'Hallo! Wie kann ich Ihnen helfen?',
  thanks: 'Gern geschehen! Kann ich Ihnen sonst noch helfen?',
  chat_ended: 'Dieses Gespräch ist beendet. Bitte starten Sie einen neuen Chat, wenn Sie weitere Hilfe brauchen.',
  unverified_fallback:
    'Ich bin nicht sicher, ob ich das anhand unserer Dokumentation richtig beantworten kann. Soll ich Sie mit einem Mitarbeiter unseres Support-Teams verbinden?',
  unverified_note:
    'Hinweis: Ich konnte diese Antwort nicht vollständig anhand unserer Dokumentation prüfen. Wenn es wichtig ist, bitten Sie mich, Sie mit einem Mitarbeiter zu verbinden.',
  interrupted_note: 'Entschuldigung, meine Antwort wurde unterbrochen. Bitte fragen Sie noch einmal oder lassen Sie sich mit einem Mitarbeiter verbinden.',
}

const fr: Table = {
  refuse_injection: 'Je ne peux pas vous aider avec cela. Je réponds aux questions sur {bot} et ses produits et services.',
  refuse_off_topic: "Je ne peux répondre qu'aux questions sur {bot} et ses produits et services. Puis-je vous aider à ce sujet ?",
  greeting: 'Bonjour ! Comment puis-je vous aider ?',
  thanks: 'Avec plaisir ! Puis-je vous aider pour autre chose ?',
  chat_ended: "Cette conversation est terminée. Démarrez une nouvelle discussion si vous avez besoin d'aide.",
  unverified_fallback:
    'Je ne suis pas certain de pouvoir répondre correctement à partir de notre documentation. Voulez-vous que je vous mette en relation avec une personne de notre équipe support ?',
  unverified_note:
    "Remarque : je n'ai pas pu vérifier entièrement cette réponse dans notre documentation. Si c'est important, demandez-moi de vous mettre en relation avec une personne.",
  interrupted_note: 'Désolé, ma réponse a été interrompue. Posez à nouveau votre question ou demandez à parler à une personne.',
}

const es: Table = {
  refuse_injection: 'No puedo ayudar con eso. Respondo preguntas sobre {bot} y sus productos y servicios.',
  refuse_off_topic: 'Solo puedo responder preguntas sobre {bot} y sus productos y servicios. ¿Puedo ayudarle con algo de eso?',
  greeting: '¡Hola! ¿En qué puedo ayudarle?',
  thanks: '¡De nada! ¿Puedo ayudarle con algo más?',
  chat_ended: 'Esta conversación ha terminado. Inicie un nuevo chat si necesita más ayuda.',
  unverified_fallback:
    'No estoy seguro de poder responder correctamente con nuestra documentación. ¿Quiere que le ponga en contacto con una persona de nuestro equipo de soporte?',
  unverified_note:
    'Nota: no pude verificar por completo esta respuesta con nuestra documentación. Si es importante, pídame que le ponga en contacto con una persona.',
  interrupted_note: 'Lo siento, mi respuesta se interrumpió. Vuelva a preguntar o pida hablar con una persona.',
}

const ru: Table = {
  refuse_injection: 'С этим я помочь не могу. Я отвечаю на вопросы о {bot}, его продуктах и услугах.',
  refuse_off_topic: 'Я могу отвечать только на вопросы о {bot}, его продуктах и услугах. Могу ли я помочь вам с чем-то из этого?',
  greeting: 'Здравствуйте! Чем могу помочь?',
  thanks: 'Пожалуйста! Могу ли я помочь чем-то ещё?',
  chat_ended: 'Этот разговор завершён. Начните новый чат, если вам нужна помощь.',
  unverified_fallback: 'Я не уверен, что могу правильно ответить на основе нашей документации. Соединить вас с сотрудником службы поддержки?',
  unverified_note: 'Обратите внимание: я не смог полностью проверить этот ответ по нашей документации. Если это важно, попросите соединить вас с сотрудником.',
  interrupted_note: 'Извините, мой ответ прервался. Спросите ещё раз или попросите соединить вас с сотрудником.',
}

const TABLES: Record<string, Table> = { en, de, fr, es, ru }

export function canned(key: CannedKey, lang: string, vars: { bot?: string } = {}): string {
  const t = (TABLES[lang] ?? en)[key]
  return t.replace('{bot}', vars.bot ?? 'us')
}

export const hasCannedLanguage = (lang: string) => lang in TABLES
