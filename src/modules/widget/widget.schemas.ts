import { Type } from '@sinclair/typebox'
import { Nullable, Uuid } from '../../http/schemas.js'
import { AttachmentIds, AttachmentList } from '../attachments/attachments.schemas.js'
import { LINK_SAFETY_KEYS, UI_KEYS } from './widget.i18n.js'

/** A bot public id as the widget sends it; anything else cannot name a bot, so it is a plain 404 later. */
const Owner = Type.Union([Type.Literal('bot'), Type.Literal('queue'), Type.Literal('human'), Type.Literal('closed')])

const BotPublicId = Type.String({ minLength: 1, maxLength: 64 })
const Locale = Type.String({ maxLength: 35 })

export const BotQuery = Type.Object({ bot_id: BotPublicId })
export const ConfigQuery = Type.Object({ bot_id: BotPublicId, locale: Type.Optional(Locale) })
export const SessionQuery = Type.Object({ bot_id: BotPublicId, session_id: Uuid })
export const ChatQuery = Type.Object({ bot_id: BotPublicId, session_id: Type.Optional(Uuid), locale: Type.Optional(Locale) })

/**
 * `message` is optional in the schema (interface.md) and unbounded here on purpose: the contract's coded
 * errors (message_required, message_too_long with max_chars) come from the service, not from a generic
 * validation error. The body limit of the route bounds it.
 */
export const ChatBody = Type.Object({
  message: Type.Optional(Type.String()),
  /** The language the visitor chose in the widget's menu (#40): the session's language from this message on. */
  language: Type.Optional(Locale),
  /** Files uploaded to this session (POST /widget/attachments) sent with the message, which may then be empty. */
  attachment_ids: Type.Optional(AttachmentIds),
})

export const SessionInitBody = Type.Object({
  bot_id: BotPublicId,
  identity_token: Type.Optional(Nullable(Type.String({ maxLength: 8192 }))),
  locale: Type.Optional(Nullable(Locale)),
})
export const SessionInitResponse = Type.Object({ session_id: Uuid, mode: Type.Union([Type.Literal('identified'), Type.Literal('anonymous')]) })

export const WidgetEscalateBody = Type.Object({
  user_note: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  trigger: Type.Optional(Type.Union([Type.Literal('user_request'), Type.Literal('answer_rejected'), Type.Literal('llm_unavailable')])),
})
export const WidgetEscalateResponse = Type.Object(
  { message: Type.String(), ticket_number: Type.String(), chat_ended: Type.Optional(Type.Boolean()), owner: Type.Optional(Owner) },
  { additionalProperties: true },
)

export const EventsQuery = Type.Object({ bot_id: BotPublicId, session_id: Uuid, after: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })) })
export const TypingBody = Type.Object({ on: Type.Boolean() })

export const ReadBody = Type.Object({ message_id: Uuid })
export const ReadResponse = Type.Object({ session_id: Uuid, read_message_id: Uuid })

const SourceLink = Type.Object({ title: Type.String(), url: Type.String() })

export const HistoryResponse = Type.Object({
  session_id: Uuid,
  messages: Type.Array(
    Type.Object({
      id: Uuid,
      role: Type.String(),
      content: Type.String(),
      created_at: Type.String({ format: 'date-time' }),
      from_operator: Type.Boolean(),
      author_name: Nullable(Type.String()),
      sources: Type.Array(SourceLink),
      /** the files the visitor sent with the message (GET /widget/attachments/{id}) */
      attachments: AttachmentList,
    }),
  ),
  chat_ended: Type.Boolean(),
  ticket_number: Nullable(Type.String()),
  owner: Owner,
  assignee_name: Nullable(Type.String()),
  /** the session's language once known (#40, #52): after a reload the widget's texts and greeting follow it */
  language: Type.Optional(Nullable(Type.String())),
})

const labels = (keys: readonly string[]) => Type.Object(Object.fromEntries(keys.map((k) => [k, Type.String()])))

export const WidgetConfigResponse = Type.Object({
  bot_id: Type.String(),
  name: Type.String(),
  link_safety_enabled: Type.Boolean(),
  allowed_domains: Type.Array(Type.String()),
  link_safety_labels: labels(LINK_SAFETY_KEYS),
  locale: Type.String(),
  /** Every visible text of the widget in `locale` (an addition to the contract's fields). */
  labels: labels(UI_KEYS),
  /** The languages the visitor may choose in the widget's menu (#40): the workspace's answer languages the widget has texts in. */
  languages: Type.Array(Type.String()),
  /** Whether a person can answer now (live conversation): offline, the widget says when the team is back. */
  availability: Type.Object({
    online: Type.Boolean({ description: 'inside office hours (none set: always) with at least one agent online' }),
    reply_eta_s: Nullable(Type.Integer({ description: 'median first human reply over the last 7 days, seconds; null without data' })),
    next_open_at: Nullable(Type.String({ format: 'date-time', description: 'the next opening when outside office hours' })),
  }),
})

export const WidgetHealthResponse = Type.Record(Type.String(), Type.String())
