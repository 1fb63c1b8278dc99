import type { MailMessage } from '../mailer/mailer.transport.js'

/** To a member someone else assigned a ticket to (when its notify_on_assignment preference is on). */
export const assignedMail = (to: string, v: { ticket_number: string; question: string; by: string | null; link: string | null }): MailMessage => ({
  to,
  subject: `Ticket ${v.ticket_number} was assigned to you`,
  text: [
    `${v.by ?? 'A member of your workspace'} assigned ticket ${v.ticket_number} to you.`,
    '',
    `Question: ${v.question.length > 500 ? `${v.question.slice(0, 499)}…` : v.question}`,
    '',
    ...(v.link ? [`Open it: ${v.link}`, ''] : []),
    'You can turn these mails off in your profile (notify on assignment).',
  ].join('\n'),
})
