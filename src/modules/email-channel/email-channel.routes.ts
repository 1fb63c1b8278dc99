import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { bearerSecurity, scopeOf, type Guards } from '../../http/auth.js'
import { rateLimits } from '../../http/rate-limit.js'
import { ErrorBody, commonErrors } from '../../http/schemas.js'
import { AppError, notFound, ValidationError } from '../../lib/errors.js'
import {
  EmailBotParams,
  EmailMessageList,
  EmailMessagesQuery,
  EmailSettings,
  EmailSettingsUpdate,
  InboundAccepted,
  InboundParams,
  TestMailBody,
  TicketEmail,
  TicketEmailParams,
  VerifySenderQuery,
} from './email-channel.schemas.js'
import { senderPage } from './email-channel.sender.js'
import type { EmailChannelService } from './email-channel.service.js'
import type { Static } from '@sinclair/typebox'

export const emailChannelRoutes =
  (deps: {
    guards: Guards
    channel: EmailChannelService
    maxBytes: number
    ticketEmail: (tenantId: string, ticketId: string, scope: string[] | null) => Promise<Static<typeof TicketEmail>>
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { guards, channel } = deps
    const base = { tags: ['email'], security: bearerSecurity }
    const errors = { ...commonErrors, 403: ErrorBody, 404: ErrorBody }
    // the webhook URL carries a secret: reading it is changing the bot's settings' business
    const settings = guards.can('settings')

    app.get(
      '/bots/:bot_id/email',
      { preHandler: settings, schema: { ...base, operationId: 'getBotEmail', params: EmailBotParams, response: { 200: EmailSettings, ...errors } } },
      (req) => channel.get(req.tenantId!, req.params.bot_id, scopeOf(req)),
    )
    app.put(
      '/bots/:bot_id/email',
      {
        preHandler: settings,
        schema: { ...base, operationId: 'updateBotEmail', params: EmailBotParams, body: EmailSettingsUpdate, response: { 200: EmailSettings, ...errors } },
      },
      (req) => channel.update(req.tenantId!, req.params.bot_id, scopeOf(req), req.body),
    )
    app.post(
      '/bots/:bot_id/email/rotate',
      {
        preHandler: settings,
        schema: {
          ...base,
          operationId: 'rotateBotEmailToken',
          description: 'A new webhook token; the old inbound URL answers 404 from now on.',
          params: EmailBotParams,
          response: { 200: EmailSettings, ...errors },
        },
      },
      (req) => channel.rotate(req.tenantId!, req.params.bot_id, scopeOf(req)),
    )
    app.post(
      '/bots/:bot_id/email/verify-sender',
      {
        preHandler: settings,
        config: { rateLimit: rateLimits.senderConfirmation },
        schema: {
          ...base,
          operationId: 'resendBotEmailSenderConfirmation',
          description: `Mails a new confirmation link (valid 48 h; the earlier one stops working) to reply_from's address. 409 when there is no reply_from or it is already confirmed. ${rateLimits.senderConfirmation.max} an hour per workspace (429 with Retry-After beyond).`,
          params: EmailBotParams,
          response: { 200: EmailSettings, 409: ErrorBody, ...errors },
        },
      },
      (req) => channel.resendConfirmation(req.tenantId!, req.params.bot_id, scopeOf(req)),
    )
    // beyond the contract: the bot page's test mail (issue 52, item 11), answered in the member's inbox, no ticket
    app.post(
      '/bots/:bot_id/email/test',
      {
        preHandler: settings,
        config: { rateLimit: rateLimits.testMail },
        schema: {
          ...base,
          operationId: 'sendBotTestMail',
          description:
            "Mails the question from the signed-in member's own address to the bot, through the same door as a customer's mail (202 as the webhook answers; `ignored` with `channel_disabled` while the bot does not answer mail). The worker answers it in the member's inbox, cited, as a dry run: no conversation and no ticket, whatever the answer; the bot page's list shows what happened.",
          params: EmailBotParams,
          body: TestMailBody,
          response: { 202: InboundAccepted, 429: ErrorBody, ...errors },
        },
      },
      async (req, reply) =>
        reply
          .code(202)
          .send(await channel.sendTest(req.tenantId!, req.params.bot_id, scopeOf(req), { question: req.body.question, from: req.authUser!.email })),
    )
    // beyond the contract: the settings screen's list of the last messages received and what became of each
    app.get(
      '/bots/:bot_id/email/messages',
      {
        preHandler: settings,
        schema: {
          ...base,
          operationId: 'listBotEmailMessages',
          params: EmailBotParams,
          querystring: EmailMessagesQuery,
          response: { 200: EmailMessageList, ...errors },
        },
      },
      (req) => channel.recent(req.tenantId!, req.params.bot_id, scopeOf(req), req.query.limit ?? 20),
    )
    // beyond the contract: a ticket's e-mail facts (attachments listed, the draft mode's suggested reply)
    app.get(
      '/escalations/:id/email',
      {
        preHandler: guards.can('tickets'),
        schema: { ...base, tags: ['escalations'], operationId: 'getTicketEmail', params: TicketEmailParams, response: { 200: TicketEmail, ...errors } },
      },
      (req) => deps.ticketEmail(req.tenantId!, req.params.id, scopeOf(req)),
    )

    await app.register(inboundRoutes(deps))
    await app.register(senderLinkRoutes(deps))
  }

/**
 * The confirmation link mailed to reply_from, in a context of its own (the Confirm button posts a form): a page
 * with a Confirm button (GET changes nothing, so a mail scanner that opens links confirms nothing), then the
 * POST that confirms. The token in the query is the credential; the pages send no referrer and run no script.
 */
const senderLinkRoutes =
  (deps: { channel: EmailChannelService }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { channel } = deps
    // the form's body is empty: the token rides in the action's query
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1024 }, (_req, _body, done) => done(null, null))
    // the confirmation link mailed to reply_from: a page with a Confirm button (GET changes nothing, so a mail
    // scanner that opens links confirms nothing), then the POST that confirms
    const page = { hide: true, querystring: VerifySenderQuery }
    app.get('/email/verify-sender', { config: { rateLimit: rateLimits.senderConfirmationLink }, schema: page }, async (req, reply) => {
      const pending = await channel.pendingSender(req.query.token)
      return senderPage(reply, pending ? { step: 'confirm', address: pending.address, token: req.query.token } : { step: 'invalid' })
    })
    app.post('/email/verify-sender', { config: { rateLimit: rateLimits.senderConfirmationLink }, schema: page }, async (req, reply) => {
      try {
        const done = await channel.confirmSender(req.query.token)
        return senderPage(reply, { step: 'done', address: done.address })
      } catch (err) {
        if (err instanceof AppError && err.status === 400) return senderPage(reply, { step: 'invalid' })
        throw err
      }
    })
  }

/**
 * The provider webhook, in a context of its own (its body parsers and limits stay here): raw RFC 822
 * (message/rfc822 or text/plain), multipart with `email` (SendGrid) or `body-mime` (Mailgun), JSON `RawEmail`
 * (Postmark). The secret token in the path is the credential.
 */
const inboundRoutes =
  (deps: { channel: EmailChannelService; maxBytes: number }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { channel, maxBytes } = deps
    // the channel its token named, from onRequest to the handler
    const channels = new WeakMap<FastifyRequest, NonNullable<Awaited<ReturnType<EmailChannelService['byToken']>>>>()
    // JSON and multipart wrap the message (Postmark escapes it); the message itself is checked against maxBytes
    const wrapped = Math.ceil(maxBytes * 1.5) + 64 * 1024
    app.removeContentTypeParser(['text/plain', 'application/json'])
    app.addContentTypeParser(['message/rfc822', 'text/plain'], { parseAs: 'buffer', bodyLimit: maxBytes }, (_req, body, done) => done(null, body))
    app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: wrapped }, (_req, body, done) => {
      try {
        done(null, JSON.parse((body as Buffer).toString('utf8')))
      } catch {
        done(new ValidationError(['body'], 'The body is not valid JSON', 'invalid_json'), undefined)
      }
    })
    await app.register(multipart, { limits: { fieldSize: maxBytes + 1, fileSize: maxBytes + 1, files: 5, fields: 50, parts: 60, headerPairs: 200 } })

    app.post(
      '/inbound/email/:token',
      {
        bodyLimit: wrapped,
        // the token first, before a byte of the body is read (finding 17): an unknown token is a 404 that costs a
        // lookup, not 14 MB of buffering and a parse
        onRequest: async (req) => {
          const found = await channel.byToken(String((req.params as { token?: unknown }).token ?? ''))
          if (!found) throw notFound('Unknown inbound address')
          channels.set(req, found)
        },
        preValidation: async (req) => {
          if (req.isMultipart()) (req as { body?: unknown }).body = null
        },
        schema: {
          tags: ['email'],
          operationId: 'receiveInboundEmail',
          description:
            'One inbound message: raw RFC 822 (message/rfc822 or text/plain), multipart field `email` (SendGrid) or `body-mime` (Mailgun), or JSON `RawEmail` (Postmark). 202 at once; the answer is written by the worker. 202 `ignored` with reason `too_complex` for a mail beyond the parse limits; 429 (Retry-After) beyond INBOUND_EMAIL_PER_BOT_PER_MINUTE; 503 (Retry-After) while every mail parser is busy.',
          params: InboundParams,
          consumes: ['message/rfc822', 'text/plain', 'multipart/form-data', 'application/json'],
          response: { 202: InboundAccepted, 404: ErrorBody, 413: ErrorBody, 422: commonErrors[422], 429: ErrorBody, 503: ErrorBody },
        },
      },
      async (req, reply) => {
        const found = channels.get(req)
        if (!found) throw notFound('Unknown inbound address')
        const raw = await rawMessage(req, maxBytes)
        return reply.code(202).send(await channel.receive(found, raw, { handOver: true }))
      },
    )
  }

const tooLarge = (maxBytes: number) => new AppError(413, 'too_large', `The message is over ${maxBytes} bytes`)

/** The raw message from whichever shape the provider posts. */
async function rawMessage(req: FastifyRequest, maxBytes: number): Promise<Buffer> {
  if (req.isMultipart()) {
    let found: Buffer | null = null
    try {
      for await (const part of req.parts()) {
        const named = part.fieldname === 'email' || part.fieldname === 'body-mime'
        if (part.type === 'file') {
          const bytes = await part.toBuffer()
          if (named && !found) found = bytes
        } else if (named && !found) {
          if (part.valueTruncated) throw tooLarge(maxBytes)
          found = Buffer.from(String(part.value), 'utf8')
        }
      }
    } catch (err) {
      if (err instanceof AppError) throw err
      if ((err as { code?: string })?.code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(maxBytes)
      throw new ValidationError(['body'], 'The multipart body could not be read', 'value_error')
    }
    if (!found) throw new ValidationError(['body', 'email'], 'No message: multipart field `email` (SendGrid) or `body-mime` (Mailgun)', 'missing')
    return checked(found, maxBytes)
  }
  const body = req.body as unknown
  if (Buffer.isBuffer(body)) return checked(body, maxBytes)
  if (body && typeof body === 'object' && typeof (body as { RawEmail?: unknown }).RawEmail === 'string') {
    return checked(Buffer.from((body as { RawEmail: string }).RawEmail, 'utf8'), maxBytes)
  }
  throw new ValidationError(['body'], 'No message: send raw RFC 822, multipart `email` / `body-mime`, or JSON `RawEmail`', 'missing')
}

function checked(raw: Buffer, maxBytes: number): Buffer {
  if (raw.length > maxBytes) throw tooLarge(maxBytes)
  if (!raw.length) throw new ValidationError(['body'], 'Not an e-mail message (empty body)', 'not_a_message')
  return raw
}
