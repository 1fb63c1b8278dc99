import type { Catalogue } from './catalogue.js'

export const de: Catalogue = {
  'chat.refuse_injection': 'Dabei kann ich nicht helfen. Ich beantworte Fragen zu {bot} und seinen Produkten und Leistungen.',
  'chat.refuse_off_topic': 'Ich kann nur Fragen zu {bot} und seinen Produkten und Leistungen beantworten. Kann ich Ihnen dabei helfen?',
  'chat.greeting': 'Hallo! Wie kann ich Ihnen helfen?',
  'chat.thanks': 'Gern geschehen! Kann ich Ihnen sonst noch helfen?',
  'chat.chat_ended': 'Dieses Gespräch ist beendet. Bitte starten Sie einen neuen Chat, wenn Sie weitere Hilfe brauchen.',
  'chat.unverified_fallback':
    'Ich bin nicht sicher, ob ich das anhand unserer Dokumentation richtig beantworten kann. Soll ich Sie mit einem Mitarbeiter unseres Support-Teams verbinden?',
  'chat.unverified_note':
    'Hinweis: Ich konnte diese Antwort nicht vollständig anhand unserer Dokumentation prüfen. Wenn es wichtig ist, bitten Sie mich, Sie mit einem Mitarbeiter zu verbinden.',
  'chat.interrupted_note':
    'Entschuldigung, meine Antwort wurde unterbrochen. Bitte fragen Sie noch einmal oder lassen Sie sich mit einem Mitarbeiter verbinden.',
  'handoff.no_answer':
    'Unsere Dokumentation deckt das nicht ab, deshalb habe ich keine Antwort gefunden. Ich habe Ihre Frage an einen Mitarbeiter unseres Support-Teams weitergeleitet. Ihre Ticketnummer lautet {ticket}.',
  'handoff.user_request':
    'Ich habe Ihre Anfrage an unser Support-Team weitergeleitet; ein Mitarbeiter meldet sich bei Ihnen. Ihre Ticketnummer lautet {ticket}.',
  'handoff.existing': 'Ich habe dies zu Ihrem offenen Support-Ticket {ticket} hinzugefügt; unser Team meldet sich bei Ihnen.',
  'handoff.llm_unavailable':
    'Unser Assistent ist vorübergehend nicht verfügbar, deshalb habe ich Ihre Frage an unser Support-Team weitergeleitet. Ihre Ticketnummer lautet {ticket}.',
  'handoff.answer_rejected': 'Das tut mir leid. Ich habe Ihre Frage an unser Support-Team weitergeleitet. Ihre Ticketnummer lautet {ticket}.',
  'handoff.manual': 'Ihr Gespräch wurde an unser Support-Team übergeben. Ihre Ticketnummer lautet {ticket}.',
  'action.confirm': 'Dafür brauche ich Ihre Bestätigung: {summary}. Soll ich fortfahren?',
  'action.failed':
    'Das konnte ich gerade leider nicht erledigen, weil unser System nicht wie erwartet geantwortet hat. Soll ich Sie mit einem Mitarbeiter unseres Support-Teams verbinden?',
  'action.done': 'Erledigt: {summary}.',
  'action.cancelled': 'In Ordnung, ich habe es nicht ausgeführt.',
  'language.fallback': 'Ich kann nur auf {language} antworten und antworte daher auf {language}.',
  'language.page_note': '(Seite auf {language})',
}
