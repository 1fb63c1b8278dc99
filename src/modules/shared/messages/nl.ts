import type { Catalogue } from './catalogue.js'

export const nl: Catalogue = {
  'chat.refuse_injection': 'Daar kan ik niet mee helpen. Ik beantwoord vragen over {bot} en zijn producten en diensten.',
  'chat.refuse_off_topic': 'Ik kan alleen vragen over {bot} en zijn producten en diensten beantwoorden. Kan ik u daarmee helpen?',
  'chat.greeting': 'Hallo! Waarmee kan ik u helpen?',
  'chat.thanks': 'Graag gedaan! Kan ik u nog ergens anders mee helpen?',
  'chat.chat_ended': 'Dit gesprek is beëindigd. Start een nieuwe chat als u meer hulp nodig hebt.',
  'chat.unverified_fallback':
    'Ik weet niet zeker of ik dit op basis van onze documentatie juist kan beantwoorden. Zal ik u doorverbinden met iemand van ons supportteam?',
  'chat.unverified_note':
    'Let op: ik kon dit antwoord niet volledig controleren in onze documentatie. Als het belangrijk is, vraag me dan u door te verbinden met een medewerker.',
  'chat.interrupted_note': 'Sorry, mijn antwoord werd onderbroken. Stel de vraag opnieuw of vraag naar een medewerker.',
  'handoff.no_answer':
    'Onze documentatie behandelt dit niet, dus ik heb geen antwoord gevonden. Ik heb uw vraag doorgestuurd naar een medewerker van ons supportteam. Uw ticketnummer is {ticket}.',
  'handoff.user_request': 'Ik heb uw verzoek doorgestuurd naar ons supportteam; een medewerker neemt contact met u op. Uw ticketnummer is {ticket}.',
  'handoff.existing': 'Ik heb dit toegevoegd aan uw openstaande ticket {ticket}; ons team neemt contact met u op.',
  'handoff.llm_unavailable':
    'Onze assistent is tijdelijk niet beschikbaar, daarom heb ik uw vraag doorgestuurd naar ons supportteam. Uw ticketnummer is {ticket}.',
  'handoff.answer_rejected': 'Jammer dat dit niet hielp. Ik heb uw vraag doorgestuurd naar ons supportteam. Uw ticketnummer is {ticket}.',
  'handoff.manual': 'Uw gesprek is overgedragen aan ons supportteam. Uw ticketnummer is {ticket}.',
  'action.confirm': 'Hiervoor heb ik uw bevestiging nodig: {summary}. Zal ik doorgaan?',
  'action.failed': 'Sorry, dat is me nu niet gelukt omdat ons systeem niet reageerde zoals verwacht. Zal ik u doorverbinden met iemand van ons supportteam?',
  'action.done': 'Klaar: {summary}.',
  'action.cancelled': 'Oké, ik heb het niet gedaan.',
  'language.fallback': 'Ik kan alleen in het {language} antwoorden, dus ik antwoord in het {language}.',
  'language.page_note': '(pagina in het {language})',
}
