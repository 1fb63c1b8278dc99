/**
 * The fixed texts a sender reads in the channel's mails, in one place so that a per-language catalogue can
 * take them over (the chat's own hand-off texts, with the ticket number, come from the escalations module).
 */
export const EMAIL_TEXTS = {
  sourcesHeading: 'Sources:',
  /** under every bot answer: the sender knows it was written by the bot and how to reach a person */
  botFooter: 'This answer was written by our assistant. Reply "human" to reach a person.',
  /** the test mail from the settings screen */
  testSubject: 'Test of the e-mail channel',
} as const
