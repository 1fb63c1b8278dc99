import type { MailMessage } from '../mailer/mailer.transport.js'

export const invitationMail = (to: string, v: { url: string; token: string; workspace: string; inviter: string | null; role: string }): MailMessage => ({
  to,
  subject: `You are invited to ${v.workspace}`,
  text: [
    `${v.inviter ?? 'A member'} invited you to the support workspace "${v.workspace}" as ${v.role}.`,
    '',
    `Open this link to join (choose a password, or sign in if you have an account): ${v.url}`,
    '',
    'Or paste this token into the app:',
    `Invitation token: ${v.token}`,
    '',
    'The invitation is valid for 7 days and can be used once. If you did not expect it, ignore this message.',
  ].join('\n'),
})
