import { Type } from '@sinclair/typebox'
import { DateTime, Email, Nullable, Uuid } from '../../http/schemas.js'

export const UserResponse = Type.Object({
  id: Uuid,
  email: Type.String(),
  is_verified: Type.Boolean(),
  tenant_id: Nullable(Uuid),
  created_at: DateTime,
})

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
