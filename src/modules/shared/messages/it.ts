import type { Catalogue } from './catalogue.js'

export const it: Catalogue = {
  'chat.refuse_injection': 'Non posso aiutarla con questo. Rispondo a domande su {bot} e sui suoi prodotti e servizi.',
  'chat.refuse_off_topic': 'Posso rispondere solo a domande su {bot} e sui suoi prodotti e servizi. Posso aiutarla con qualcosa di questo tipo?',
  'chat.greeting': 'Salve! Come posso aiutarla?',
  'chat.thanks': "Prego! Posso aiutarla con qualcos'altro?",
  'chat.chat_ended': 'Questa conversazione è terminata. Avvii una nuova chat se ha bisogno di altro aiuto.',
  'chat.unverified_fallback':
    'Non sono sicuro di poter rispondere correttamente in base alla nostra documentazione. Vuole che la metta in contatto con una persona del nostro team di assistenza?',
  'chat.unverified_note':
    'Nota: non ho potuto verificare completamente questa risposta nella nostra documentazione. Se è importante, mi chieda di metterla in contatto con una persona.',
  'chat.interrupted_note': 'Mi scusi, la mia risposta è stata interrotta. Ripeta la domanda o chieda di parlare con una persona.',
  'handoff.no_answer':
    'La nostra documentazione non tratta questo argomento, quindi non ho trovato una risposta. Ho inoltrato la sua domanda a una persona del nostro team di assistenza. Il suo numero di ticket è {ticket}.',
  'handoff.user_request': 'Ho inoltrato la sua richiesta al nostro team di assistenza; una persona la ricontatterà. Il suo numero di ticket è {ticket}.',
  'handoff.existing': 'Ho aggiunto questo al suo ticket aperto {ticket}; il nostro team la ricontatterà.',
  'handoff.llm_unavailable':
    'Il nostro assistente non è momentaneamente disponibile, quindi ho inoltrato la sua domanda al nostro team di assistenza. Il suo numero di ticket è {ticket}.',
  'handoff.answer_rejected':
    'Mi dispiace che non sia stato utile. Ho inoltrato la sua domanda al nostro team di assistenza. Il suo numero di ticket è {ticket}.',
  'handoff.manual': 'La sua conversazione è stata trasferita al nostro team di assistenza. Il suo numero di ticket è {ticket}.',
  'action.confirm': 'Per farlo mi serve la sua conferma: {summary}. Procedo?',
  'action.failed':
    'Mi dispiace, non sono riuscito a farlo ora perché il nostro sistema non ha risposto come previsto. Vuole che la metta in contatto con una persona del nostro team di assistenza?',
  'action.done': 'Fatto: {summary}.',
  'action.cancelled': "Va bene, non l'ho fatto.",
  'language.fallback': 'Posso rispondere solo in {language}, quindi risponderò in {language}.',
  'language.page_note': '(pagina in {language})',
}
