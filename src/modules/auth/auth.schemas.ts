import { Type } from '@sinclair/typebox'
import { BotIds, DateTime, Email, Nullable, RoleSchema, Uuid } from '../../http/schemas.js'

export const PermissionSchema = Type.Union(
  [
    Type.Literal('workspace'),
    Type.Literal('members'),
    Type.Literal('settings'),
    Type.Literal('integrations'),
    Type.Literal('actions'),
    Type.Literal('actions_test'),
    Type.Literal('audit'),
    Type.Literal('knowledge'),
    Type.Literal('evals'),
    Type.Literal('evals_read'),
    Type.Literal('tickets'),
    Type.Literal('saved_replies'),
    Type.Literal('saved_replies_read'),
    Type.Literal('analytics'),
    Type.Literal('member'),
  ],
  { description: 'what a role may do (the role table of docs/team.md)' },
)

export const UserResponse = Type.Object({
  id: Uuid,
  email: Type.String(),
  is_verified: Type.Boolean(),
  tenant_id: Nullable(Uuid),
  created_at: DateTime,
  role: Nullable(RoleSchema),
  bot_ids: BotIds,
  can_view_original: Type.Boolean(),
  notify_on_assignment: Type.Boolean({ description: 'mail me when someone else assigns a ticket to me' }),
  display_name: Nullable(Type.String({ description: 'how visitors see the member; null: the bot\'s name + " team"' })),
  permissions: Type.Array(PermissionSchema, { description: "the permissions of the caller's role (empty without a workspace), for menus" }),
})
export const UpdateMeRequest = Type.Object(
  {
    notify_on_assignment: Type.Optional(Type.Boolean()),
    display_name: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 80, description: 'shown to visitors on messages, joins and resolution replies; null clears it' })),
    ),
  },
  { additionalProperties: false },
)

// Password length is checked by the service so the 422 names the rule in the contract's words.
const Password = Type.String({ maxLength: 1024 })

export const RegisterRequest = Type.Object({ email: Email, password: Password })
export const RegisterResponse = Type.Object({ user: UserResponse, message: Type.String() })

export const LoginRequest = Type.Object({ email: Type.String({ maxLength: 254 }), password: Password })
export const AuthResponse = Type.Object({
  token: Type.String(),
  access_token: Type.String(),
  token_type: Type.Literal('bearer'),
  expires_in: Type.Integer(),
  user: UserResponse,
})
export const VerifyEmailRequest = Type.Object({ token: Type.String({ minLength: 1, maxLength: 256 }) })
export const VerifyEmailResponse = Type.Intersect([AuthResponse, Type.Object({ api_key: Nullable(Type.String()) })])
export const ForgotPasswordRequest = Type.Object({ email: Type.String({ maxLength: 254 }) })
export const MessageResponse = Type.Object({ message: Type.String() })
export const ResetPasswordRequest = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 256 }),
  new_password: Password,
})
export const WidgetTokenQuery = Type.Object({ bot_id: Type.Optional(Type.String({ maxLength: 64 })) })
export const WidgetTokenResponse = Type.Object({ identity_token: Type.String(), expires_in: Type.Integer() })
