import { FALLBACK_LABELS } from '../../../widget/src/labels.js'

/**
 * The widget's visible texts, per language. /widget/config sends the set for the visitor's locale, so the
 * browser bundle carries no translations of its own (only the English fallback in case config fails).
 * `{hostname}`, `{ticket}` and `{max}` are filled in by the widget.
 */
export const LINK_SAFETY_KEYS = ['title', 'body', 'continue_label', 'cancel_label'] as const
export type LinkSafetyLabels = Record<(typeof LINK_SAFETY_KEYS)[number], string>

export const UI_KEYS = [
  'open_chat',
  'close_chat',
  'greeting',
  'placeholder',
  'send',
  'thinking',
  'searching',
  'writing',
  'sources',
  'talk_to_human',
  'escalate_prompt',
  'escalate_note_placeholder',
  'escalate_confirm',
  'cancel',
  'ticket_opened',
  'chat_ended',
  'new_chat',
  'error_generic',
  'error_rate_limited',
  'error_offline',
  'error_too_long',
  'retry',
  'you',
  'assistant',
  'operator',
  'powered_by',
  'team_online',
  'reply_eta',
  'team_away',
  'team_back',
  'offline_prompt',
  'email_label',
  'offline_note_label',
  'offline_send',
  'offline_sent',
  'email_invalid',
] as const
export type UiLabels = Record<(typeof UI_KEYS)[number], string>

interface Language {
  link: LinkSafetyLabels
  ui: UiLabels
}

// The browser bundle's English fallback is the one English source; the service serves the same texts.
const en: Language = FALLBACK_LABELS

const de: Language = {
  link: { title: 'Externen Link öffnen?', body: 'Sie wechseln zu {hostname}. Fortfahren?', continue_label: 'Öffnen', cancel_label: 'Abbrechen' },
  ui: {
    open_chat: 'Chat öffnen',
    close_chat: 'Chat schließen',
    greeting: 'Hallo! Wie kann ich Ihnen helfen?',
    placeholder: 'Ihre Frage…',
    send: 'Senden',
    thinking: 'Denke nach…',
    searching: 'Durchsuche die Wissensdatenbank…',
    writing: 'Schreibe…',
    sources: 'Quellen',
    talk_to_human: 'Mit einem Menschen sprechen',
    escalate_prompt: 'Jemand aus unserem Team meldet sich. Möchten Sie noch etwas mitteilen?',
    escalate_note_placeholder: 'Optionale Notiz',
    escalate_confirm: 'Mitarbeiter anfordern',
    cancel: 'Abbrechen',
    ticket_opened: 'Ticket {ticket} wurde eröffnet. Unser Team meldet sich bei Ihnen.',
    chat_ended: 'Dieser Chat ist beendet.',
    new_chat: 'Neuen Chat beginnen',
    error_generic: 'Etwas ist schiefgelaufen. Bitte versuchen Sie es erneut.',
    error_rate_limited: 'Sie senden Nachrichten etwas zu schnell. Bitte warten Sie einen Moment.',
    error_offline: 'Der Chat-Dienst ist gerade nicht erreichbar. Bitte prüfen Sie Ihre Verbindung.',
    error_too_long: 'Ihre Nachricht ist zu lang (höchstens {max} Zeichen).',
    retry: 'Erneut versuchen',
    you: 'Sie',
    assistant: 'Assistent',
    operator: 'Support-Team',
    powered_by: 'KI-Antworten können Fehler enthalten.',
    team_online: 'Unser Team ist online.',
    reply_eta: 'Antwortet meist in etwa {n} Min.',
    team_away: 'Unser Team ist gerade nicht da.',
    team_back: 'Unser Team ist gerade nicht da. Zurück {when} (Ihre Zeit).',
    offline_prompt: 'Gerade ist niemand da. Hinterlassen Sie Ihre E-Mail-Adresse, wir antworten per Mail.',
    email_label: 'Ihre E-Mail-Adresse',
    offline_note_label: 'Ihre Nachricht (optional)',
    offline_send: 'Senden',
    offline_sent: 'Danke! Wir antworten Ihnen an {email}.',
    email_invalid: 'Bitte geben Sie eine gültige E-Mail-Adresse ein.',
  },
}

const fr: Language = {
  link: { title: 'Ouvrir le lien externe ?', body: 'Vous allez sur {hostname}. Continuer ?', continue_label: 'Ouvrir', cancel_label: 'Annuler' },
  ui: {
    open_chat: 'Ouvrir le chat',
    close_chat: 'Fermer le chat',
    greeting: 'Bonjour ! Comment puis-je vous aider ?',
    placeholder: 'Posez votre question…',
    send: 'Envoyer',
    thinking: 'Réflexion…',
    searching: 'Recherche dans la base de connaissances…',
    writing: 'Rédaction…',
    sources: 'Sources',
    talk_to_human: 'Parler à un humain',
    escalate_prompt: 'Un membre de notre équipe va vous répondre. Quelque chose à ajouter ?',
    escalate_note_placeholder: 'Note facultative',
    escalate_confirm: 'Demander un humain',
    cancel: 'Annuler',
    ticket_opened: 'Le ticket {ticket} a été ouvert. Notre équipe vous répondra.',
    chat_ended: 'Cette conversation est terminée.',
    new_chat: 'Nouvelle conversation',
    error_generic: 'Une erreur est survenue. Veuillez réessayer.',
    error_rate_limited: 'Vous envoyez des messages un peu trop vite. Patientez un instant puis réessayez.',
    error_offline: 'Le service de chat est injoignable. Vérifiez votre connexion et réessayez.',
    error_too_long: 'Votre message est trop long ({max} caractères au maximum).',
    retry: 'Réessayer',
    you: 'Vous',
    assistant: 'Assistant',
    operator: 'Équipe support',
    powered_by: 'Les réponses de l’IA peuvent contenir des erreurs.',
    team_online: 'Notre équipe est en ligne.',
    reply_eta: 'Répond généralement en {n} min environ',
    team_away: 'Notre équipe est absente pour le moment.',
    team_back: 'Notre équipe est absente. De retour {when} (votre heure).',
    offline_prompt: 'Personne n’est disponible pour le moment. Laissez votre e-mail et nous vous répondrons par mail.',
    email_label: 'Votre e-mail',
    offline_note_label: 'Votre message (facultatif)',
    offline_send: 'Envoyer',
    offline_sent: 'Merci ! Nous vous répondrons à {email}.',
    email_invalid: 'Veuillez saisir une adresse e-mail valide.',
  },
}

const es: Language = {
  link: { title: '¿Abrir enlace externo?', body: 'Vas a ir a {hostname}. ¿Continuar?', continue_label: 'Abrir', cancel_label: 'Cancelar' },
  ui: {
    open_chat: 'Abrir chat',
    close_chat: 'Cerrar chat',
    greeting: '¡Hola! ¿En qué puedo ayudarte?',
    placeholder: 'Escribe tu pregunta…',
    send: 'Enviar',
    thinking: 'Pensando…',
    searching: 'Buscando en la base de conocimiento…',
    writing: 'Escribiendo…',
    sources: 'Fuentes',
    talk_to_human: 'Hablar con una persona',
    escalate_prompt: 'Alguien de nuestro equipo te responderá. ¿Algo que debamos saber?',
    escalate_note_placeholder: 'Nota opcional',
    escalate_confirm: 'Pedir una persona',
    cancel: 'Cancelar',
    ticket_opened: 'Se ha abierto el ticket {ticket}. Nuestro equipo te contactará.',
    chat_ended: 'Esta conversación ha terminado.',
    new_chat: 'Iniciar un chat nuevo',
    error_generic: 'Algo salió mal. Inténtalo de nuevo.',
    error_rate_limited: 'Estás enviando mensajes demasiado rápido. Espera un momento e inténtalo de nuevo.',
    error_offline: 'No podemos conectar con el chat. Revisa tu conexión e inténtalo de nuevo.',
    error_too_long: 'Tu mensaje es demasiado largo (máximo {max} caracteres).',
    retry: 'Reintentar',
    you: 'Tú',
    assistant: 'Asistente',
    operator: 'Equipo de soporte',
    powered_by: 'Las respuestas de la IA pueden contener errores.',
    team_online: 'Nuestro equipo está en línea.',
    reply_eta: 'Suele responder en unos {n} min',
    team_away: 'Nuestro equipo no está disponible ahora.',
    team_back: 'Nuestro equipo no está disponible. Vuelve {when} (su hora).',
    offline_prompt: 'No hay nadie ahora mismo. Deje su correo y le responderemos por e-mail.',
    email_label: 'Su correo electrónico',
    offline_note_label: 'Su mensaje (opcional)',
    offline_send: 'Enviar',
    offline_sent: '¡Gracias! Le responderemos en {email}.',
    email_invalid: 'Introduzca una dirección de correo válida.',
  },
}

const ru: Language = {
  link: { title: 'Открыть внешнюю ссылку?', body: 'Вы переходите на {hostname}. Продолжить?', continue_label: 'Открыть', cancel_label: 'Отмена' },
  ui: {
    open_chat: 'Открыть чат',
    close_chat: 'Закрыть чат',
    greeting: 'Здравствуйте! Чем могу помочь?',
    placeholder: 'Введите вопрос…',
    send: 'Отправить',
    thinking: 'Думаю…',
    searching: 'Ищу в базе знаний…',
    writing: 'Пишу ответ…',
    sources: 'Источники',
    talk_to_human: 'Связаться с человеком',
    escalate_prompt: 'Сотрудник поддержки свяжется с вами. Хотите что-то добавить?',
    escalate_note_placeholder: 'Комментарий (необязательно)',
    escalate_confirm: 'Позвать сотрудника',
    cancel: 'Отмена',
    ticket_opened: 'Создана заявка {ticket}. Наша команда свяжется с вами.',
    chat_ended: 'Этот чат завершён.',
    new_chat: 'Начать новый чат',
    error_generic: 'Что-то пошло не так. Попробуйте ещё раз.',
    error_rate_limited: 'Вы отправляете сообщения слишком часто. Подождите немного и попробуйте снова.',
    error_offline: 'Сервис чата недоступен. Проверьте подключение и попробуйте снова.',
    error_too_long: 'Сообщение слишком длинное (не более {max} символов).',
    retry: 'Повторить',
    you: 'Вы',
    assistant: 'Ассистент',
    operator: 'Служба поддержки',
    powered_by: 'Ответы ИИ могут содержать ошибки.',
    team_online: 'Наша команда на связи.',
    reply_eta: 'Обычно отвечает примерно за {n} мин',
    team_away: 'Сейчас нашей команды нет на месте.',
    team_back: 'Сейчас нашей команды нет. Вернёмся {when} (по вашему времени).',
    offline_prompt: 'Сейчас никого нет. Оставьте e-mail, и мы ответим письмом.',
    email_label: 'Ваш e-mail',
    offline_note_label: 'Ваше сообщение (необязательно)',
    offline_send: 'Отправить',
    offline_sent: 'Спасибо! Мы ответим на {email}.',
    email_invalid: 'Введите корректный адрес e-mail.',
  },
}

const LANGUAGES: Record<string, Language> = { en, de, fr, es, ru }
export const SUPPORTED_LOCALES = Object.keys(LANGUAGES)

/** `de-AT`, `de_AT`, `DE` -> `de`; anything unknown, empty or malformed -> `en`. */
export function resolveLocale(locale: string | null | undefined): string {
  const primary = (locale ?? '').trim().toLowerCase().split(/[-_]/)[0] ?? ''
  return primary in LANGUAGES ? primary : 'en'
}

export function labelsFor(locale: string | null | undefined): { locale: string; link: LinkSafetyLabels; ui: UiLabels } {
  const code = resolveLocale(locale)
  const lang = LANGUAGES[code]!
  return { locale: code, link: { ...lang.link }, ui: { ...lang.ui } }
}
