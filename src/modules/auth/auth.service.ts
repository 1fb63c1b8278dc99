import { hash, verify } from '@node-rs/argon2'
import type { Selectable } from 'kysely'
import type { Db } from '../../db/client.js'
import { memberOf } from '../../http/auth.js'
import { PERMISSIONS, roleMay, type Permission } from '../../http/permissions.js'
import type { UsersTable } from '../../db/schema/foundation.js'
import { addSeconds, type Clock } from '../../lib/clock.js'
import { randomToken, sha256Hex } from '../../lib/crypto.js'
import { AppError, badRequest, notFound, unauthorized, ValidationError } from '../../lib/errors.js'
import type { BotsRepo } from '../bots/bots.repo.js'
import type { BotsService } from '../bots/bots.service.js'
import type { EmailService } from '../mailer/mailer.service.js'
import type { AuditPort } from '../shared/audit.port.js'
import { inScope, type BotScope } from '../shared/bot-scope.js'
import type { TenantsService } from '../tenants/tenants.service.js'
import { signIdentityToken } from '../tenants/identity-token.fns.js'
import type { AuthRepo } from './auth.repo.js'
import { normalizeEmail, passwordProblem } from './auth.fns.js'
import { JWT_TTL_SECONDS, type Jwt } from './jwt.js'
import { verifyEmailMail, resetPasswordMail } from './auth.mails.js'
import { cleanDisplayName, sameName } from './display-name.fns.js'

const VERIFY_TTL_SECONDS = 48 * 3600
const RESET_TTL_SECONDS = 3600
const WIDGET_TOKEN_TTL_SECONDS = 300
// argon2id, OWASP's minimum profile (19 MiB, t=2): ~20 ms here, enough against offline guessing.
const ARGON2 = { memoryCost: 19456, timeCost: 2, parallelism: 1 }

type UserRow = Selectable<UsersTable>
const PERMISSION_NAMES = Object.keys(PERMISSIONS) as Permission[]

type PresentedUser = Pick<
  UserRow,
  'id' | 'email' | 'is_verified' | 'tenant_id' | 'created_at' | 'role' | 'bot_ids' | 'can_view_original' | 'notify_on_assignment' | 'display_name'
>

export function presentUser(u: PresentedUser) {
  const member = u.tenant_id ? memberOf(u) : null
  return {
    id: u.id,
    email: u.email,
    is_verified: u.is_verified,
    tenant_id: u.tenant_id,
    created_at: u.created_at.toISOString(),
    role: member?.role ?? null,
    bot_ids: member?.botIds ?? null,
    can_view_original: member?.canViewOriginal ?? false,
    notify_on_assignment: u.notify_on_assignment,
    display_name: u.display_name?.trim() || null,
    permissions: member ? PERMISSION_NAMES.filter((p) => roleMay(member.role, p)) : [],
  }
}

export const FORGOT_PASSWORD_MESSAGE = 'If an account exists for this e-mail, a password reset link has been sent.'

export function checkPassword(password: string, field: string): void {
  const problem = passwordProblem(password)
  if (problem) throw new ValidationError(['body', field], problem, 'password_policy')
}
export const hashPassword = (password: string) => hash(password, ARGON2)
export const passwordMatches = (passwordHash: string, password: string) => verify(passwordHash, password).catch(() => false)

export function createAuthService(deps: {
  db: Db
  clock: Clock
  jwt: Jwt
  repo: AuthRepo
  email: EmailService
  tenants: Pick<TenantsService, 'provision' | 'signingSecrets'>
  bots: Pick<BotsService, 'create'>
  botsRepo: Pick<BotsRepo, 'findByPublicId' | 'list'>
  frontendUrl: string
  audit: AuditPort
}) {
  const { db, clock, jwt, repo } = deps
  const link = (path: string, token: string) => `${deps.frontendUrl}${path}?token=${encodeURIComponent(token)}`

  async function session(user: UserRow | (PresentedUser & { token_version: number })) {
    const token = await jwt.sign({ sub: user.id, ver: user.token_version })
    return { token, access_token: token, token_type: 'bearer' as const, expires_in: JWT_TTL_SECONDS, user: presentUser(user) }
  }

  /** A member may not pass for the bot: a display name that is one of the workspace's bots' names is a 422 naming it. */
  async function notABotsName(userId: string, name: string) {
    const tenantId = (await repo.findUserById(userId))?.tenant_id
    if (!tenantId) return
    const bot = (await deps.botsRepo.list(tenantId)).find((b) => sameName(b.name, name))
    if (bot) throw new ValidationError(['body', 'display_name'], `display_name must not be the bot's name (${bot.name})`)
  }

  return {
    /** A signed-in session for the user (the answer of login), for the team module's accepted invitation. */
    session,

    /** The member's own settings; display_name is how visitors see them (null: the bot's name + " team"). */
    async updateMe(userId: string, patch: { notify_on_assignment?: boolean; display_name?: string | null }) {
      const now = clock.now()
      const set: { notify_on_assignment?: boolean; display_name?: string | null } = {}
      if (patch.notify_on_assignment !== undefined) set.notify_on_assignment = patch.notify_on_assignment
      if (patch.display_name !== undefined) {
        const name = patch.display_name === null ? null : cleanDisplayName(patch.display_name)
        if (patch.display_name !== null && !name) throw new ValidationError(['body', 'display_name'], 'display_name must not be blank', 'string_too_short')
        if (name) await notABotsName(userId, name)
        set.display_name = name
      }
      const row = Object.keys(set).length === 0 ? await repo.findUserById(userId) : await repo.updateProfile(userId, set, now)
      if (!row) throw notFound('User not found')
      return presentUser(row)
    },

    async register(emailInput: string, password: string) {
      checkPassword(password, 'password')
      const email = normalizeEmail(emailInput)
      if (await repo.findUserByEmail(email)) throw new AppError(409, 'email_exists', 'Email already registered')
      const passwordHash = await hashPassword(password)
      const now = clock.now()
      const token = randomToken()
      const user = await db.transaction().execute(async (trx) => {
        const u = await repo.insertUser({ email, password_hash: passwordHash, now }, trx)
        await repo.insertToken(
          { user_id: u.id, purpose: 'verify_email', token_hash: sha256Hex(token), expires_at: addSeconds(now, VERIFY_TTL_SECONDS), now },
          trx,
        )
        await deps.email.queue(verifyEmailMail(email, link('/verify', token), token), {}, trx)
        return u
      })
      return { user: presentUser(user), message: 'Registered. Check your e-mail to verify your address.' }
    },

    async login(emailInput: string, password: string, ip: string | null = null) {
      const user = await repo.findUserByEmail(normalizeEmail(emailInput))
      if (!user) throw notFound('User not found')
      if (!(await passwordMatches(user.password_hash, password))) throw unauthorized('Incorrect email or password')
      if (user.tenant_id) await deps.audit.record(user.tenant_id, { actorUserId: user.id, ip, action: 'signed_in', itemType: 'user', itemId: user.id })
      return session(user)
    },

    /** Spends the token, verifies the user and creates the tenant with its first API key and bot. */
    async verifyEmail(token: string) {
      const now = clock.now()
      const result = await db.transaction().execute(async (trx) => {
        const userId = await repo.consumeToken(sha256Hex(token), 'verify_email', now, trx)
        if (!userId) throw badRequest('Invalid or expired verification token', 'invalid_token')
        const existing = await repo.findUserById(userId, trx)
        if (!existing) throw badRequest('Invalid or expired verification token', 'invalid_token')
        if (existing.tenant_id) {
          return { user: await repo.markVerified(userId, existing.tenant_id, now, trx), apiKey: null }
        }
        const { tenant, apiKey } = await deps.tenants.provision(userId, trx)
        await deps.bots.create(tenant.id, { name: 'Support Bot' }, trx)
        return { user: await repo.markVerified(userId, tenant.id, now, trx), apiKey }
      })
      return { ...(await session(result.user)), api_key: result.apiKey }
    },

    /** Always the same answer, so the endpoint does not reveal which e-mails have accounts. */
    async forgotPassword(emailInput: string) {
      const email = normalizeEmail(emailInput)
      const user = await repo.findUserByEmail(email)
      if (user) {
        const now = clock.now()
        const token = randomToken()
        await db.transaction().execute(async (trx) => {
          await repo.expireTokens(user.id, 'reset_password', now, trx)
          await repo.insertToken(
            { user_id: user.id, purpose: 'reset_password', token_hash: sha256Hex(token), expires_at: addSeconds(now, RESET_TTL_SECONDS), now },
            trx,
          )
          await deps.email.queue(resetPasswordMail(user.email, link('/reset-password', token), token), {}, trx)
        })
      }
      return { message: FORGOT_PASSWORD_MESSAGE }
    },

    /** Sets the password and bumps the token version, which revokes every JWT issued before. */
    async resetPassword(token: string, newPassword: string) {
      checkPassword(newPassword, 'new_password')
      const passwordHash = await hashPassword(newPassword)
      const now = clock.now()
      await db.transaction().execute(async (trx) => {
        const id = await repo.consumeToken(sha256Hex(token), 'reset_password', now, trx)
        if (!id) throw badRequest('Invalid or expired reset token', 'invalid_token')
        await repo.setPassword(id, passwordHash, now, trx)
        await repo.expireTokens(id, 'reset_password', now, trx)
      })
      return { message: 'Password has been reset. Please log in with your new password.' }
    },

    /**
     * A short-lived identity token for the caller, signed with the secret of the tenant that owns `botId`
     * (or the caller's own tenant without it).
     */
    async widgetToken(user: { id: string; email: string; tenant_id: string | null; is_verified: boolean }, botPublicId?: string, scope: BotScope = null) {
      let tenantId: string | null
      if (botPublicId) {
        const bot = await deps.botsRepo.findByPublicId(botPublicId)
        // Only the caller's own bots: signing with another tenant's secret would let any account open
        // "identified" sessions in a stranger's widget. A foreign bot reads exactly like a missing one.
        if (!bot || bot.tenant_id !== user.tenant_id || !inScope(scope, bot.id)) throw notFound('Bot not found')
        tenantId = bot.tenant_id
      } else {
        if (!user.tenant_id) throw notFound('Tenant not found')
        tenantId = user.tenant_id
      }
      const [secret] = await deps.tenants.signingSecrets(tenantId)
      if (!secret) throw badRequest('The tenant has no signing secret; create one with POST /tenants/me/kyc/secret', 'no_signing_secret')
      const iat = Math.floor(clock.now().getTime() / 1000)
      const token = signIdentityToken({ user_id: user.id, email: user.email, iat, exp: iat + WIDGET_TOKEN_TTL_SECONDS }, secret)
      return { identity_token: token, expires_in: WIDGET_TOKEN_TTL_SECONDS }
    },
  }
}

export type AuthService = ReturnType<typeof createAuthService>
