import type { MailMessage } from '../mailer/mailer.transport.js'

// The token stands on a short line of its own, so it survives quoted-printable line wrapping and can be
// copied (or grepped) from an .eml file in DATA_DIR/outbox.

export const verifyEmailMail = (to: string, url: string, token: string): MailMessage => ({
  to,
  subject: 'Verify your e-mail address',
  text: [
    'Welcome! Please confirm your e-mail address to activate your workspace.',
    '',
    `Open this link: ${url}`,
    '',
    'Or paste this token into the app:',
    `Verification token: ${token}`,
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
    'Or paste this token into the app:',
    `Reset token: ${token}`,
    '',
    'The link is valid for 1 hour and can be used once. If it was not you, ignore this message.',
  ].join('\n'),
})
