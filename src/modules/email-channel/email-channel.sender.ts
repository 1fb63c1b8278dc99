import type { FastifyReply } from 'fastify'
import type { MailMessage } from '../mailer/mailer.transport.js'

/**
 * The link that confirms a bot's reply_from, mailed to that address from EMAIL_FROM. It says what confirming
 * allows (mail that carries this address as its From) so that a recipient who did not ask ignores it.
 */
export const confirmSenderMail = (to: string, v: { url: string; botName: string; inbound: string }): MailMessage => ({
  to,
  subject: `Confirm ${to} as the sender of a support bot's answers`,
  text: [
    `A workspace asked to send its support bot's e-mail answers ("${v.botName.slice(0, 100)}") with ${to} as their sender.`,
    '',
    `If that was you or your team, open this link and press Confirm: ${v.url}`,
    '',
    `Until then the answers go out from our address, with replies still coming to ${v.inbound}.`,
    'The link is valid for 48 hours and can be used once. If you did not expect this message, ignore it: nothing is sent as you.',
  ].join('\n'),
})

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

type SenderPage = { step: 'confirm'; address: string; token: string } | { step: 'done'; address: string } | { step: 'invalid' }

/** The small page of the confirmation link: no script, no outside resource, no referrer (the URL holds the token). */
export function senderPage(reply: FastifyReply, p: SenderPage) {
  const body =
    p.step === 'confirm'
      ? `<h1>Confirm the sender</h1><p>Answers of a support bot will go out with <b>${escapeHtml(p.address)}</b> as their sender.</p>` +
        `<form method="post" action="/email/verify-sender?token=${encodeURIComponent(p.token)}"><button type="submit">Confirm</button></form>` +
        '<p>If you did not expect this, close this page: nothing changes.</p>'
      : p.step === 'done'
        ? `<h1>Confirmed</h1><p><b>${escapeHtml(p.address)}</b> is now the sender of the bot's answers. You can close this page.</p>`
        : "<h1>Link not valid</h1><p>This confirmation link has expired, was used, or the bot's sender changed since. Ask for a new one on the bot's E-mail settings.</p>"
  return reply
    .code(p.step === 'invalid' ? 400 : 200)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .send(
      `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>E-mail sender</title></head>` +
        `<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem">${body}</body></html>`,
    )
}
