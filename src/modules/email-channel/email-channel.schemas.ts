import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'

export const EmailMode = Type.Union([Type.Literal('answer'), Type.Literal('draft')])

export const EmailSettings = Type.Object({
  enabled: Type.Boolean(),
  mode: EmailMode,
  reply_from: Nullable(Type.String()),
  reply_from_verified: Type.Boolean({
    description: "reply_from's address confirmed through the link mailed to it; until then mail goes from EMAIL_FROM's address under reply_from's name",
  }),
  reply_from_pending: Type.Boolean({ description: 'a confirmation link to reply_from is out and unexpired (48 h)' }),
  sender: Type.String({ description: "read-only: the From the bot's mails carry now" }),
  signature: Nullable(Type.String()),
  inbound_address: Type.String({ description: "read-only: the bot's address, <local>@INBOUND_EMAIL_DOMAIN" }),
  inbound_url: Type.String({ description: 'read-only: the provider webhook URL with its secret token' }),
  /** beyond the contract: whether this service listens for the inbound address's mail itself (INBOUND_SMTP_PORT) */
  inbound_smtp: Type.Optional(
    Type.Boolean({
      description: 'read-only: an SMTP listener for the inbound address runs here (INBOUND_SMTP_PORT is set); false: mail arrives by the webhook only',
    }),
  ),
})

export const EmailSettingsUpdate = Type.Object({
  enabled: Type.Boolean(),
  mode: EmailMode,
  reply_from: Type.Optional(Nullable(Type.String({ maxLength: 320, description: '"Acme Support <support@acme.com>"; null: EMAIL_FROM' }))),
  signature: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
})

/** The bot page's test mail: the question, mailed from the signed-in member's own address. */
export const TestMailBody = Type.Object(
  { question: Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S', description: 'the subject and the body of the test mail' }) },
  { additionalProperties: false },
)

export const VerifySenderQuery = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) })

export const EmailBotParams = Type.Object({ bot_id: Uuid })
export const InboundParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) })

export const InboundAccepted = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('queued'), Type.Literal('duplicate'), Type.Literal('ignored')]),
  reason: Type.Optional(Type.String()),
})

export const Attachment = Type.Object({
  name: Type.String(),
  type: Type.String(),
  size: Type.Integer(),
  attachment_id: Type.Optional(
    Type.String({ format: 'uuid', description: 'stored with the message (an accepted type within the caps): GET /attachments/{id}; absent: listed only' }),
  ),
})

export const EmailMessageStatus = Type.Union(
  ['queued', 'answered', 'handed_off', 'delivered', 'drafted', 'ignored', 'failed'].map((s) => Type.Literal(s)),
  {
    description:
      'queued; answered; handed_off (a ticket, the sender told its number); delivered (to the person who has the conversation); drafted (mode draft: a suggested reply on the ticket); ignored (reason: the loop guard); failed',
  },
)

export const EmailMessage = Type.Object({
  id: Uuid,
  from: Nullable(Type.String()),
  subject: Type.String(),
  status: Type.String(),
  reason: Nullable(Type.String()),
  ticket_number: Nullable(Type.String()),
  session_id: Nullable(Uuid),
  attachments: Type.Array(Attachment),
  draft: Nullable(Type.String({ description: 'mode draft: the suggested reply' })),
  reply: Nullable(Type.String({ description: 'what the bot mailed (an answer or a ticket notice)' })),
  confirmation_link: Nullable(
    Type.String({ description: "reason forwarding_confirmation: Gmail's link that lets the mailbox forward to the bot (never answered)" }),
  ),
  received_at: DateTime,
  processed_at: Nullable(DateTime),
})
export const EmailMessageList = Type.Object({ items: Type.Array(EmailMessage) })
export const EmailMessagesQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })) })

export const TicketEmailParams = Type.Object({ id: Uuid })
export const TicketEmail = Type.Object({
  channel: Type.String({ description: 'the conversation channel: widget, api or email' }),
  messages: Type.Array(
    Type.Object({
      id: Uuid,
      subject: Type.String(),
      status: Type.String(),
      attachments: Type.Array(Attachment),
      draft: Nullable(Type.String()),
      received_at: DateTime,
    }),
  ),
})
