import { Type } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from '../../http/schemas.js'

const Domains = Type.Array(Type.String({ maxLength: 300 }), { maxItems: 100 })

export const Bot = Type.Object({
  id: Uuid,
  tenant_id: Uuid,
  name: Type.String(),
  public_id: Type.String(),
  is_active: Type.Boolean(),
  link_safety_enabled: Type.Boolean(),
  allowed_domains: Type.Array(Type.String()),
  agent_instructions: Nullable(Type.String()),
  website_url: Nullable(Type.String()),
  created_at: DateTime,
  updated_at: DateTime,
})
export const BotList = Type.Object({ items: Type.Array(Bot) })

export const BotCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  agent_instructions: Type.Optional(Nullable(Type.String({ maxLength: 8000 }))),
  website_url: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
  link_safety_enabled: Type.Optional(Nullable(Type.Boolean())),
  allowed_domains: Type.Optional(Nullable(Domains)),
})
export const BotUpdate = Type.Object({
  name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  is_active: Type.Optional(Nullable(Type.Boolean())),
  agent_instructions: Type.Optional(Nullable(Type.String({ maxLength: 8000 }))),
  link_safety_enabled: Type.Optional(Nullable(Type.Boolean())),
  allowed_domains: Type.Optional(Nullable(Domains)),
})
export const BotParams = Type.Object({ bot_id: Uuid })

export const DisclosureLevel = Type.Union([Type.Literal('detailed'), Type.Literal('standard'), Type.Literal('corporate')])
export const DisclosureConfig = Type.Object({ bot_id: Uuid, level: DisclosureLevel, updated_at: DateTime })
export const DisclosureUpdate = Type.Object({ level: DisclosureLevel })
