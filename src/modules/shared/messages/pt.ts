import type { Catalogue } from './catalogue.js'

export const pt: Catalogue = {
  'chat.refuse_injection': 'Não posso ajudar com isso. Respondo a perguntas sobre {bot} e os seus produtos e serviços.',
  'chat.refuse_off_topic': 'Só posso responder a perguntas sobre {bot} e os seus produtos e serviços. Posso ajudar com algo deste tipo?',
  'chat.greeting': 'Olá! Como posso ajudar?',
  'chat.thanks': 'De nada! Posso ajudar com mais alguma coisa?',
  'chat.chat_ended': 'Esta conversa terminou. Inicie um novo chat se precisar de mais ajuda.',
  'chat.unverified_fallback':
    'Não tenho a certeza de poder responder corretamente com base na nossa documentação. Quer que o ponha em contacto com uma pessoa da nossa equipa de suporte?',
  'chat.unverified_note':
    'Nota: não consegui verificar totalmente esta resposta na nossa documentação. Se for importante, peça-me para o pôr em contacto com uma pessoa.',
  'chat.interrupted_note': 'Desculpe, a minha resposta foi interrompida. Pergunte novamente ou peça para falar com uma pessoa.',
  'handoff.no_answer':
    'A nossa documentação não aborda este assunto, por isso não encontrei uma resposta. Encaminhei a sua pergunta para uma pessoa da nossa equipa de suporte. O número do seu pedido é {ticket}.',
  'handoff.user_request': 'Encaminhei o seu pedido para a nossa equipa de suporte; uma pessoa entrará em contacto consigo. O número do seu pedido é {ticket}.',
  'handoff.existing': 'Adicionei isto ao seu pedido de suporte aberto {ticket}; a nossa equipa entrará em contacto consigo.',
  'handoff.llm_unavailable':
    'O nosso assistente está temporariamente indisponível, por isso encaminhei a sua pergunta para a nossa equipa de suporte. O número do seu pedido é {ticket}.',
  'handoff.answer_rejected': 'Lamento que não tenha ajudado. Encaminhei a sua pergunta para a nossa equipa de suporte. O número do seu pedido é {ticket}.',
  'handoff.manual': 'A sua conversa foi transferida para a nossa equipa de suporte. O número do seu pedido é {ticket}.',
  'action.confirm': 'Para isso preciso da sua confirmação: {summary}. Posso continuar?',
  'action.failed':
    'Desculpe, não consegui fazer isso agora porque o nosso sistema não respondeu como esperado. Quer que o ponha em contacto com uma pessoa da nossa equipa de suporte?',
  'action.done': 'Feito: {summary}.',
  'action.cancelled': 'Está bem, não o fiz.',
  'language.fallback': 'Só posso responder em {language}, por isso vou responder em {language}.',
  'language.page_note': '(página em {language})',
}
