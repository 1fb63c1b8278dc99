import type { Catalogue } from './catalogue.js'

export const es: Catalogue = {
  'chat.refuse_injection': 'No puedo ayudar con eso. Respondo preguntas sobre {bot} y sus productos y servicios.',
  'chat.refuse_off_topic': 'Solo puedo responder preguntas sobre {bot} y sus productos y servicios. ¿Puedo ayudarle con algo de eso?',
  'chat.greeting': '¡Hola! ¿En qué puedo ayudarle?',
  'chat.thanks': '¡De nada! ¿Puedo ayudarle con algo más?',
  'chat.chat_ended': 'Esta conversación ha terminado. Inicie un nuevo chat si necesita más ayuda.',
  'chat.unverified_fallback':
    'No estoy seguro de poder responder correctamente con nuestra documentación. ¿Quiere que le ponga en contacto con una persona de nuestro equipo de soporte?',
  'chat.unverified_note':
    'Nota: no pude verificar por completo esta respuesta con nuestra documentación. Si es importante, pídame que le ponga en contacto con una persona.',
  'chat.interrupted_note': 'Lo siento, mi respuesta se interrumpió. Vuelva a preguntar o pida hablar con una persona.',
  'handoff.no_answer':
    'Nuestra documentación no cubre este tema, así que no encontré una respuesta. He enviado su pregunta a una persona de nuestro equipo de soporte. Su número de ticket es {ticket}.',
  'handoff.user_request': 'He enviado su solicitud a nuestro equipo de soporte; una persona se pondrá en contacto con usted. Su número de ticket es {ticket}.',
  'handoff.existing': 'He añadido esto a su ticket abierto {ticket}; nuestro equipo se pondrá en contacto con usted.',
  'handoff.llm_unavailable':
    'Nuestro asistente no está disponible en este momento, así que he enviado su pregunta a nuestro equipo de soporte. Su número de ticket es {ticket}.',
  'handoff.answer_rejected': 'Lamento que no le haya ayudado. He enviado su pregunta a nuestro equipo de soporte. Su número de ticket es {ticket}.',
  'handoff.manual': 'Su conversación ha sido transferida a nuestro equipo de soporte. Su número de ticket es {ticket}.',
  'action.confirm': 'Para hacerlo necesito su confirmación: {summary}. ¿Continúo?',
  'action.failed':
    'Lo siento, no he podido hacerlo ahora porque nuestro sistema no respondió como esperaba. ¿Quiere que le ponga en contacto con una persona de nuestro equipo de soporte?',
  'action.done': 'Hecho: {summary}.',
  'action.cancelled': 'De acuerdo, no lo he hecho.',
  'language.fallback': 'Solo puedo responder en {language}, así que le responderé en {language}.',
  'language.page_note': '(página en {language})',
}
