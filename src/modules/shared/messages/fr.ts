import type { Catalogue } from './catalogue.js'

export const fr: Catalogue = {
  'chat.refuse_injection': 'Je ne peux pas vous aider avec cela. Je réponds aux questions sur {bot} et ses produits et services.',
  'chat.refuse_off_topic': "Je ne peux répondre qu'aux questions sur {bot} et ses produits et services. Puis-je vous aider à ce sujet ?",
  'chat.greeting': 'Bonjour ! Comment puis-je vous aider ?',
  'chat.thanks': 'Avec plaisir ! Puis-je vous aider pour autre chose ?',
  'chat.chat_ended': "Cette conversation est terminée. Démarrez une nouvelle discussion si vous avez besoin d'aide.",
  'chat.unverified_fallback':
    'Je ne suis pas certain de pouvoir répondre correctement à partir de notre documentation. Voulez-vous que je vous mette en relation avec une personne de notre équipe support ?',
  'chat.unverified_note':
    "Remarque : je n'ai pas pu vérifier entièrement cette réponse dans notre documentation. Si c'est important, demandez-moi de vous mettre en relation avec une personne.",
  'chat.interrupted_note': 'Désolé, ma réponse a été interrompue. Posez à nouveau votre question ou demandez à parler à une personne.',
  'handoff.no_answer':
    "Notre documentation ne couvre pas ce sujet, je n'ai donc pas trouvé de réponse. J'ai transmis votre question à une personne de notre équipe support. Votre numéro de ticket est {ticket}.",
  'handoff.user_request': "J'ai transmis votre demande à notre équipe support ; une personne vous répondra. Votre numéro de ticket est {ticket}.",
  'handoff.existing': "J'ai ajouté ceci à votre ticket ouvert {ticket} ; notre équipe vous répondra.",
  'handoff.llm_unavailable':
    "Notre assistant est momentanément indisponible, j'ai donc transmis votre question à notre équipe support. Votre numéro de ticket est {ticket}.",
  'handoff.answer_rejected': "Désolé que cela ne vous ait pas aidé. J'ai transmis votre question à notre équipe support. Votre numéro de ticket est {ticket}.",
  'handoff.manual': 'Votre conversation a été transmise à notre équipe support. Votre numéro de ticket est {ticket}.',
  'action.confirm': "Pour cela, j'ai besoin de votre confirmation : {summary}. Dois-je continuer ?",
  'action.failed':
    "Désolé, je n'ai pas pu le faire pour le moment : notre système n'a pas répondu comme prévu. Voulez-vous que je vous mette en relation avec une personne de notre équipe support ?",
  'action.done': 'C’est fait : {summary}.',
  'action.cancelled': "D'accord, je ne l'ai pas fait.",
  'language.fallback': "Je ne peux répondre qu'en {language} : je vous réponds donc en {language}.",
  'language.page_note': '(page en {language})',
}
