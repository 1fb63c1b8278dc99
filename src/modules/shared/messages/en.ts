/** The visitor's fixed texts in English: the reference every other language has the keys and placeholders of (messages.test.ts). */
export const en = {
  'chat.refuse_injection': "I can't help with that. I'm here to answer questions about {bot} and its products and services.",
  'chat.refuse_off_topic':
    'I can only help with questions about {bot} and its products and services. Is there something along those lines I can help you with?',
  'chat.greeting': 'Hello! How can I help you today?',
  'chat.thanks': "You're welcome! Is there anything else I can help you with?",
  'chat.chat_ended': 'This conversation has ended. Please start a new chat if you need more help.',
  'chat.unverified_fallback':
    "I'm not confident I can answer this correctly from our documentation. Would you like me to connect you with a person from our support team?",
  'chat.unverified_note':
    "Please note: I couldn't fully verify this answer against our documentation. If it matters, ask me to connect you with a person from our support team.",
  'chat.interrupted_note': 'Sorry, my answer was interrupted. Please ask again, or ask me to connect you with a person from our support team.',
  'handoff.no_answer':
    "Our documentation doesn't cover this, so I couldn't find an answer to it. I've passed your question to a person on our support team. Your ticket number is {ticket}.",
  'handoff.user_request': "I've passed your request to our support team, and a person will get back to you. Your ticket number is {ticket}.",
  'handoff.existing': "I've added this to your open support ticket {ticket}; our team will get back to you.",
  'handoff.llm_unavailable': "Our assistant is temporarily unavailable, so I've passed your question to our support team. Your ticket number is {ticket}.",
  'handoff.answer_rejected': "Sorry that didn't help. I've passed your question to our support team. Your ticket number is {ticket}.",
  'handoff.manual': 'Your conversation has been handed over to our support team. Your ticket number is {ticket}.',
  'action.confirm': 'To do this I need your confirmation: {summary}. Shall I go ahead?',
  'action.failed':
    "Sorry, I couldn't get that done right now because our system did not respond as expected. Would you like me to connect you with a person from our support team?",
  'action.done': 'Done: {summary}.',
  'action.cancelled': "OK, I haven't done it.",
  'language.fallback': 'I can answer in {language} only, so I will reply in {language}.',
  'language.page_note': '(page in {language})',
}

export type MessageKey = keyof typeof en
