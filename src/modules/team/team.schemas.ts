import { Type } from '@sinclair/typebox'
import { BotIds, DateTime, Email, Nullable, RoleSchema, Uuid } from '../../http/schemas.js'

export const Member = Type.Object({
  user_id: Uuid,
  email: Type.String(),
  role: RoleSchema,
  bot_ids: BotIds,
  /** additive to the contract's shape: agents see unredacted originals only when granted */
  can_view_original: Type.Boolean({ description: 'may show original (unredacted) text; always true for owners and admins' }),
  last_active_at: Nullable(DateTime),
  created_at: DateTime,
})
export const MemberList = Type.Object({ items: Type.Array(Member) })
export const MemberParams = Type.Object({ user_id: Uuid })
export const UpdateMemberRequest = Type.Object(
  {
    role: Type.Optional(RoleSchema),
    bot_ids: Type.Optional(BotIds),
    can_view_original: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

export const InvitationStatus = Type.Union([Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('revoked'), Type.Literal('expired')])
export const Invitation = Type.Object({
  id: Uuid,
  email: Type.String(),
  role: RoleSchema,
  bot_ids: BotIds,
  can_view_original: Type.Boolean(),
  status: InvitationStatus,
  expires_at: DateTime,
  created_at: DateTime,
  invited_by_user_id: Nullable(Uuid),
})
export const InvitationList = Type.Object({ items: Type.Array(Invitation) })
export const InvitationParams = Type.Object({ id: Uuid })
export const CreateInvitationRequest = Type.Object(
  {
    email: Email,
    role: RoleSchema,
    bot_ids: Type.Optional(BotIds),
    can_view_original: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
)

export const AcceptInvitationRequest = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 256 }),
  password: Type.Optional(
    Type.String({
      maxLength: 1024,
      description: "required when the invited address has no account yet; the account's password otherwise (unless signed in as it)",
    }),
  ),
})

export const TransferOwnershipRequest = Type.Object({ user_id: Uuid }, { additionalProperties: false })
export const TransferOwnershipResponse = Type.Object({ owner: Member, previous_owner: Member })
