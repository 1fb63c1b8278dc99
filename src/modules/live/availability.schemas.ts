import { Type } from '@sinclair/typebox'
import { DateTime, Nullable } from '../../http/schemas.js'
import { Member } from '../team/team.schemas.js'

export const OfficeHoursBody = Type.Object(
  {
    timezone: Type.String({ minLength: 1, maxLength: 64, default: 'UTC', description: 'IANA time zone, e.g. Europe/Berlin' }),
    weekly: Type.Array(
      Type.Object(
        {
          day: Type.Integer({ minimum: 0, maximum: 6, description: '0 = Sunday' }),
          start: Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description: 'HH:MM, local time' }),
          end: Type.String({ pattern: '^(([01]\\d|2[0-3]):[0-5]\\d|24:00)$', description: 'HH:MM, after start (24:00 for midnight)' }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 70, description: 'opening intervals; none: open every day (but the holidays)' },
    ),
    holidays: Type.Array(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD, local date' }), { maxItems: 400 }),
  },
  { additionalProperties: false },
)

export const LiveStatusSchema = Type.Union([Type.Literal('online'), Type.Literal('away'), Type.Literal('offline')])
export const MemberStatusBody = Type.Object({ status: LiveStatusSchema }, { additionalProperties: false })
export const MemberWithStatus = Type.Composite([Member, Type.Object({ status: LiveStatusSchema })])

export const Availability = Type.Object({
  online: Type.Boolean({ description: 'inside office hours with at least one agent online' }),
  reply_eta_s: Nullable(Type.Integer({ description: 'median first human reply over the last 7 days, seconds' })),
  next_open_at: Nullable(DateTime),
})
