import type { FastifyRequest } from 'fastify'
import { forbidden, notFound, unauthorized } from '../lib/errors.js'
import type { Clock } from '../lib/clock.js'
import { sha256Hex } from '../lib/crypto.js'
import { NoticeCache, type ChangeFeed } from '../db/change-feed.js'
import { USERS_TOPIC, type AuthRepo } from '../modules/auth/auth.repo.js'
import { AUTH_COOKIE, type Jwt } from '../modules/auth/jwt.js'
import { TENANTS_TOPIC, type Keyring, type TenantsRepo } from '../modules/tenants/tenants.repo.js'
import { setBounded } from '../lib/bounded.js'
import { isSpace } from '../lib/trim-run.fns.js'
import { PERMISSIONS, roleMay, type Permission, type Role } from './permissions.js'

export interface AuthUser {
  id: string
  email: string
  is_verified: boolean
  tenant_id: string | null
  created_at: Date
  role: Role
  bot_ids: string[] | null
  can_view_original: boolean
  notify_on_assignment: boolean
  display_name: string | null
}

/** What a member may see and do beyond its role: the bots it is limited to (null: all), showing originals. */
export interface Member {
  role: Role
  botIds: string[] | null
  canViewOriginal: boolean
}

/** Who did something, for the audit log: the signed-in member (null for an X-API-Key caller) and its address. */
export interface Actor {
  userId: string | null
  ip: string | null
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the `user` and `tenant` guards. */
    authUser: AuthUser | null
    /** Set by the `tenant` and `apiKey` guards: the tenant every query of this request is scoped to. */
    tenantId: string | null
    apiKeyId: string | null
    /** Set by `can(...)`: the caller's role in the workspace and the bots it is limited to (null: all). */
    member: Member | null
  }
}

export const actorOf = (req: FastifyRequest): Actor => ({ userId: req.authUser?.id ?? null, ip: req.ip ?? null })

/** The caller of a ticket or conversation route: who, its role, its bots, whether it may show originals. */
export interface Viewer extends Actor {
  role: Role
  scope: readonly string[] | null
  canViewOriginal: boolean
}
/** Fails closed (no bots, no originals) on a route that forgot `guards.can`. */
export const viewerOf = (req: FastifyRequest): Viewer => ({
  ...actorOf(req),
  role: req.member?.role ?? 'analyst',
  scope: req.member ? req.member.botIds : [],
  canViewOriginal: req.member?.canViewOriginal ?? false,
})
/** The bots the caller is limited to (null: all); every repository read of bot-owned rows takes it. */
export const scopeOf = (req: FastifyRequest): string[] | null => req.member?.botIds ?? null

export function memberOf(row: { role: Role; bot_ids: string[] | null; can_view_original: boolean }): Member {
  const unscoped = row.role === 'owner' || row.role === 'admin'
  return {
    role: row.role,
    botIds: unscoped ? null : row.bot_ids,
    canViewOriginal: unscoped || (row.role === 'agent' && row.can_view_original),
  }
}

/** Only touch last_used_at this often; one write per minute per key is plenty for the dashboard. */
const TOUCH_EVERY_MS = 60_000
/**
 * How long a guard may reuse a user row it read. Changes to a user (verification, password reset) are
 * announced on the change feed, so every instance drops its copy within milliseconds; this is only a bound.
 */
export const USER_CACHE_MS = 60_000
const USER_CACHE_MAX = 10_000
/** Key hashes whose tenant this instance has learned (a key never changes tenant), and tenants' keyrings kept. */
const KEY_TENANTS_MAX = 50_000
const KEYRING_CACHE_MAX = 10_000

type UserRow = NonNullable<Awaited<ReturnType<AuthRepo['findUserById']>>>

/**
 * Route guards, used as `preHandler`. A JWT never authenticates an X-API-Key route and a ck_ key never
 * authenticates a dashboard route: each guard reads only its own credential.
 */
export function createGuards(deps: {
  jwt: Jwt
  clock: Clock
  authRepo: Pick<AuthRepo, 'findUserById' | 'touchUser'>
  tenantsRepo: Pick<TenantsRepo, 'findUsableKeyByHash' | 'touchApiKey' | 'keyring'>
  changes: ChangeFeed
}) {
  // A dashboard request then costs no query for its user.
  const users = new NoticeCache<UserRow | undefined>(deps.changes, USERS_TOPIC, { ttlMs: USER_CACHE_MS, max: USER_CACHE_MAX, clock: deps.clock })
  const loadUser = (id: string) => users.get(id, () => deps.authRepo.findUserById(id))

  // A widget or server-to-server request then costs no query for its key: the first use of a key finds its
  // tenant in the database, later ones check the tenant's cached keyring (dropped on every key or tenant
  // change by the feed). Usability is judged at each request, so a grace window ends on time.
  const keyTenants = new Map<string, string>()
  const keyrings = new NoticeCache<Keyring | undefined>(deps.changes, TENANTS_TOPIC, { ttlMs: USER_CACHE_MS, max: KEYRING_CACHE_MAX, clock: deps.clock })
  const touched = new Map<string, number>()
  async function findKey(hash: string, now: Date) {
    const tenantId = keyTenants.get(hash)
    if (tenantId === undefined) {
      const row = await deps.tenantsRepo.findUsableKeyByHash(hash, now)
      if (row) setBounded(keyTenants, hash, row.tenant_id, KEY_TENANTS_MAX)
      return row
    }
    const ring = await keyrings.get(tenantId, () => deps.tenantsRepo.keyring(tenantId, now))
    const k = ring?.keys.find((x) => x.key_hash === hash)
    if (!ring || !k || !(k.status === 'active' || (k.status === 'revoking' && k.expires_at !== null && k.expires_at > now))) return undefined
    return { id: k.id, tenant_id: tenantId, last_used_at: k.last_used_at, tenant_active: ring.tenantActive }
  }

  async function user(req: FastifyRequest): Promise<void> {
    const header = req.headers.authorization
    let token: string | undefined
    if (header) {
      // not /^Bearer\s+(.+)$/i: quadratic on a header of spaces (issue 50); a header holds no line break
      if (header.slice(0, 6).toLowerCase() === 'bearer' && isSpace(header[6] ?? '')) token = header.slice(7).trim()
    }
    token ||= req.cookies?.[AUTH_COOKIE]
    if (!token) throw unauthorized('Not authenticated')
    const claims = await deps.jwt.verify(token)
    if (!claims) throw unauthorized('Invalid or expired token')
    const row = await loadUser(claims.sub)
    if (!row || row.token_version !== claims.ver) throw unauthorized('Invalid or expired token')
    req.authUser = {
      id: row.id,
      email: row.email,
      is_verified: row.is_verified,
      tenant_id: row.tenant_id,
      created_at: row.created_at,
      role: row.role,
      bot_ids: row.bot_ids,
      can_view_original: row.can_view_original,
      notify_on_assignment: row.notify_on_assignment,
      display_name: row.display_name,
    }
  }

  // "last active" of the members list, written at most once a minute per user and not announced (no guard reads it)
  const active = new Map<string, number>()
  function touch(userId: string) {
    const now = deps.clock.now()
    const last = active.get(userId) ?? 0
    if (now.getTime() - last <= TOUCH_EVERY_MS) return
    setBounded(active, userId, now.getTime(), USER_CACHE_MAX)
    void deps.authRepo.touchUser(userId, now).catch(() => {})
  }

  async function tenant(req: FastifyRequest): Promise<void> {
    await user(req)
    const u = req.authUser!
    if (!u.is_verified) throw forbidden('Email not verified', 'email_not_verified')
    if (!u.tenant_id) throw notFound('Tenant not found')
    req.tenantId = u.tenant_id
    req.member = memberOf(u)
    touch(u.id)
  }

  async function apiKey(req: FastifyRequest): Promise<void> {
    const raw = req.headers['x-api-key']
    const key = Array.isArray(raw) ? raw[0] : raw
    if (!key || !/^ck_[0-9a-f]{32}$/.test(key.trim())) throw unauthorized('Invalid or missing API key')
    const now = deps.clock.now()
    const row = await findKey(sha256Hex(key.trim()), now)
    if (!row || !row.tenant_active) throw unauthorized('Invalid or missing API key')
    req.tenantId = row.tenant_id
    req.apiKeyId = row.id
    const lastUsed = Math.max(row.last_used_at?.getTime() ?? 0, touched.get(row.id) ?? 0)
    if (now.getTime() - lastUsed > TOUCH_EVERY_MS) {
      setBounded(touched, row.id, now.getTime(), KEY_TENANTS_MAX)
      void deps.tenantsRepo.touchApiKey(row.tenant_id, row.id, now).catch(() => {})
    }
  }

  /**
   * A dashboard route's guard: the caller is a verified member of a workspace whose role holds `permission`
   * (403 naming the role otherwise). The role and bots come from the cached user row, which every change
   * of a membership announces, so a role change or a removal applies on the next request.
   */
  function can(permission: Permission) {
    return async function canGuard(req: FastifyRequest): Promise<void> {
      await tenant(req)
      const { role } = req.member!
      if (!roleMay(role, permission)) throw forbidden(`Your role (${role}) may not ${PERMISSIONS[permission].what}`)
    }
  }

  return { user, tenant, apiKey, can }
}

export type Guards = ReturnType<typeof createGuards>

/** OpenAPI security requirements matching the guards. */
export const bearerSecurity: Record<string, string[]>[] = [{ bearerAuth: [] }, { cookieAuth: [] }]
export const apiKeySecurity: Record<string, string[]>[] = [{ apiKeyAuth: [] }]
