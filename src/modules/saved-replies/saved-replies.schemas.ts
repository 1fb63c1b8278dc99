import { Type } from '@sinclair/typebox'
import { DateTime, Uuid } from '../../http/schemas.js'

const Title = Type.String({ minLength: 1, maxLength: 120 })
const Content = Type.String({
  minLength: 1,
  maxLength: 8000,
  description: 'may hold {{visitor.name}}, {{agent.name}}, {{ticket.number}}, filled in when inserted',
})
const Shortcut = Type.String({ pattern: '^[a-z0-9-]{1,32}$', description: 'typed after "/" in the composer; unique in the workspace' })

export const SavedReply = Type.Object({
  id: Uuid,
  title: Type.String(),
  content: Type.String(),
  shortcut: Type.String(),
  created_at: DateTime,
  updated_at: DateTime,
})
export const SavedReplyList = Type.Object({ items: Type.Array(SavedReply) })
export const SavedReplyCreate = Type.Object({ title: Title, content: Content, shortcut: Shortcut }, { additionalProperties: false })
export const SavedReplyPatch = Type.Object(
  { title: Type.Optional(Title), content: Type.Optional(Content), shortcut: Type.Optional(Shortcut) },
  { additionalProperties: false },
)
export const SavedReplyParams = Type.Object({ id: Uuid })
