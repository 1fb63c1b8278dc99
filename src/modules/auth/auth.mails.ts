import type { MailMessage } from '../email/mailer.js'

export const verifyEmailMail = (to: string, url: string, token: string): MailMessage => ({
  to,
  subject: 'Verify your e-mail address',
  text: [
    'Welcome! Please confirm your e-mail address to activate your workspace.',
    '',
    `Open this link: ${url}`,
    '',
    `Or use this verification token: ${token}`,
    '',
    'The link is valid for 48 hours. If you did not sign up, ignore this message.',
  ].join('\n'),
})

export const resetPasswordMail = (to: string, url: string, token: string): MailMessage => ({
  to,
  subject: 'Reset your password',
  text: [
    'Someone asked to reset the password of your account.',
    '',
    `Open this link to choose a new password: ${url}`,
    '',
    `Or use this reset token: ${token}`,
    '',
    'The link is valid for 1 hour and can be used once. If it was not you, ignore this message.',
  ].join('\n'),
})
