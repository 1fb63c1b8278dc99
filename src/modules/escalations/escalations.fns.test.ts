import { describe, expect, it } from 'vitest'
import { emailReplyMail, extractEmail, isNegativeReply, mailLanguage, notificationMail, notificationSubject, operatorReplyMail } from './escalations.fns.js'

describe('isNegativeReply', () => {
  it.each([
    'no',
    'No.',
    'no thanks',
    'No, thank you!',
    'nope',
    "that's all",
    'That’s all, thanks',
    'nothing else',
    'Nothing else, bye',
    'nein',
    'Nein, danke',
    'nein danke das ist alles',
    'non',
    'Non merci',
    "c'est tout",
    'no gracias',
    'No, gracias.',
    'nada más',
    'нет',
    'Нет, спасибо',
    'больше ничего',
    'это всё',
  ])('"%s" ends the chat', (text) => expect(isNegativeReply(text)).toBe(true))

  it.each([
    'no, I have another question',
    'How do I get a refund?',
    'nobody answered',
    'not yet received my parcel',
    'yes',
    'none of your business? no wait',
    'Nein, ich habe noch eine Frage',
    'нет доступа к аккаунту',
    '',
    'no '.repeat(40),
  ])('"%s" does not', (text) => expect(isNegativeReply(text)).toBe(false))
})

describe('extractEmail', () => {
  it('finds the address with the redaction detector', () => {
    expect(extractEmail('sure, it is kim.lee+support@example.co.uk thanks')).toBe('kim.lee+support@example.co.uk')
    expect(extractEmail('my mail: kim@example.com, or call')).toBe('kim@example.com')
    expect(extractEmail('no e-mail here, call +49 170 1234567')).toBeNull()
    expect(extractEmail('kim at example dot com')).toBeNull()
  })
})

describe('mails', () => {
  const ticket = {
    ticket_number: 'ESC-0007',
    priority: 'high' as const,
    trigger: 'llm_unavailable' as const,
    primary_question: 'Where is my order?\nIt is late, my phone is [PHONE]',
    transcript: [{ role: 'user', content: 'Where is my order? It is late, my phone is [PHONE]', created_at: '2026-01-02T10:00:00.000Z' }],
    user_note: null,
    user_email: 'kim@example.com',
    user_name: 'Kim',
    user_id: 'u-1',
    plan: 'pro',
    bot_name: 'Helper',
    evidence: [{ title: 'Shipping', confidence: 0.12 }],
  }

  it('puts priority, number and the question on one subject line', () => {
    expect(notificationSubject(ticket)).toBe('[HIGH] ESC-0007: Where is my order? It is late, my phone is [PHONE]')
    expect(notificationSubject({ ...ticket, primary_question: 'x'.repeat(500) }).length).toBeLessThan(150)
  })

  it('writes the notification in the escalation language, English otherwise', () => {
    const de = notificationMail(ticket, { language: mailLanguage('de-CH'), link: 'http://app.test/escalations/1' })
    expect(de.text).toContain('Neues Support-Ticket ESC-0007')
    expect(de.text).toContain('Priorität: hoch')
    expect(de.text).toContain('Besucher: Where is my order?')
    expect(de.text).toContain('- Shipping (0.12)')
    expect(de.text).toContain('http://app.test/escalations/1')
    const en = notificationMail(ticket, { language: mailLanguage('pt'), link: null })
    expect(en.text).toContain('Reason: the assistant was unavailable')
    expect(en.text).toContain('Visitor: Kim <kim@example.com> (id u-1, pro)')
  })

  it('mails an operator reply in the visitor language', () => {
    const m = operatorReplyMail({ ticket_number: 'ESC-0001', reply: 'Your parcel left today.', question: 'Wo ist mein Paket?', language: 'de' })
    expect(m.subject).toBe('Antwort auf Ihre Support-Anfrage ESC-0001')
    expect(m.text).toContain('Your parcel left today.')
  })

  it('mails a reply on an e-mail ticket as written, signed with the member, with no chat notice around it', () => {
    const m = emailReplyMail({ ticket_number: 'ESC-0002', reply: 'Hi Jane,\n\nthe upload limit is 50 MB.\n', author: 'Kim' })
    expect(m.text).toBe('Hi Jane,\n\nthe upload limit is 50 MB.\n\nKim\n')
  })
})
