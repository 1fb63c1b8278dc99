import type { Db } from '../../db/client.js'
import { memberOf, type Actor } from '../../http/auth.js'
import { roleMay, type Role } from '../../http/permissions.js'
import { addSeconds, type Clock } from '../../lib/clock.js'
import { randomToken, sha256Hex } from '../../lib/crypto.js'
import { badRequest, conflict, forbidden, notFound, unauthorized, ValidationError } from '../../lib/errors.js'
import { normalizeEmail } from '../auth/auth.fns.js'
import type { AuthRepo } from '../auth/auth.repo.js'
import { checkPassword, hashPassword, passwordMatches, type AuthService } from '../auth/auth.service.js'
import type { EmailService } from '../mailer/mailer.service.js'
import type { AuditPort } from '../shared/audit.port.js'
import { INVITATION_TTL_SECONDS, invitationProblem, invitationState, leavesNoOwner, unscopedRole } from './team.fns.js'
import { invitationMail } from './team.mails.js'
import type { InvitationRow, MemberRow, MembershipPatch, TeamRepo } from './team.repo.js'

const LAST_OWNER = 'A workspace keeps at least one owner: make another member owner first'

/**
 * Members, invitations and ownership. Every change that could touch the owners runs under the tenant row's
 * lock and decides "is another owner left" after taking it, so two owners demoting each other at once
 * leave one owner (the second request gets 409). Each change is audited in its own transaction.
 */
export function createTeamService(deps: {
  db: Db
  clock: Clock
  repo: TeamRepo
  users: Pick<AuthRepo, 'findUserByEmail'>
  email: Pick<EmailService, 'queue'>
  audit: AuditPort
  session: AuthService['session']
  frontendUrl: string
}) {
  const { db, clock, repo, audit } = deps

  function presentMember(m: MemberRow) {
    const member = memberOf(m)
    return {
      user_id: m.id,
      email: m.email,
      role: member.role,
      bot_ids: member.botIds,
      can_view_original: member.canViewOriginal,
      last_active_at: m.last_active_at ? m.last_active_at.toISOString() : null,
      created_at: m.created_at.toISOString(),
    }
  }

  function presentInvitation(i: InvitationRow, now = clock.now()) {
    return {
      id: i.id,
      email: i.email,
      role: i.role,
      bot_ids: unscopedRole(i.role) ? null : i.bot_ids,
      can_view_original: unscopedRole(i.role) || (i.role === 'agent' && i.can_view_original),
      status: invitationState(i, now),
      expires_at: i.expires_at.toISOString(),
      created_at: i.created_at.toISOString(),
      invited_by_user_id: i.invited_by_user_id,
    }
  }

  /** bot_ids only for the roles that can be limited, and only this workspace's bots. */
  async function checkScope(tenantId: string, role: Role, botIds: string[] | null | undefined, field: string, trx: Db = db) {
    if (botIds == null) return
    if (unscopedRole(role)) throw new ValidationError(['body', field], `A ${role} sees every bot; bot_ids must be null`, 'bot_ids_not_applicable')
    const foreign = await repo.foreignBots(tenantId, botIds, trx)
    if (foreign.length) throw new ValidationError(['body', field], `Unknown bot id: ${foreign[0]}`, 'unknown_bot')
  }

  /** The acting member as it is now (it may have changed since its guard ran), under the tenant lock. */
  async function actingMember(tenantId: string, actor: Actor, trx: Db) {
    const row = actor.userId ? await repo.findMember(tenantId, actor.userId, trx) : undefined
    if (!row) throw unauthorized('Invalid or expired token')
    if (!roleMay(row.role, 'members')) throw forbidden(`Your role (${row.role}) may not manage members`)
    return row
  }

  function inviteLink(token: string) {
    return `${deps.frontendUrl}/accept-invitation?token=${encodeURIComponent(token)}`
  }

  async function queueInvitationMail(tenantId: string, inv: InvitationRow, token: string, actor: Actor, trx: Db) {
    const workspace = (await repo.tenantName(tenantId, trx)) ?? 'your team'
    const inviter = actor.userId ? ((await repo.findMember(tenantId, actor.userId, trx))?.email ?? null) : null
    await deps.email.queue(invitationMail(inv.email, { url: inviteLink(token), token, workspace, inviter, role: inv.role }), { tenantId }, trx)
  }

  return {
    presentMember,

    async listMembers(tenantId: string) {
      return { items: (await repo.listMembers(tenantId)).map(presentMember) }
    },

    /**
     * Under the tenant lock: the last-owner rule first (409, also for the second of two concurrent
     * demotions), then "only an owner changes an owner" by the caller's role when its request was
     * authorised, then the caller's current membership.
     */
    async updateMember(tenantId: string, actor: Actor & { role: Role }, userId: string, patch: MembershipPatch) {
      const now = clock.now()
      return db.transaction().execute(async (trx) => {
        await repo.lockTenant(tenantId, trx)
        const target = await repo.findMember(tenantId, userId, trx)
        if (!target) throw notFound('Member not found')
        const role = patch.role ?? target.role
        // decided first: of two owners demoting each other at once, the second learns it would leave none
        if (leavesNoOwner(target, { role }, await repo.countOwners(tenantId, trx))) throw conflict(LAST_OWNER, 'last_owner')
        if ((target.role === 'owner' || role === 'owner') && actor.role !== 'owner') {
          throw forbidden(`Your role (${actor.role}) may not change an owner or make one`)
        }
        const me = await actingMember(tenantId, actor, trx)
        if ((target.role === 'owner' || role === 'owner') && me.role !== 'owner') throw forbidden(`Your role (${me.role}) may not change an owner or make one`)
        await checkScope(tenantId, role, patch.bot_ids, 'bot_ids', trx)
        const next: MembershipPatch = { ...patch, role }
        if (unscopedRole(role)) next.bot_ids = null
        const row = await repo.updateMember(tenantId, userId, next, now, trx)
        if (!row) throw notFound('Member not found')
        await audit.record(
          tenantId,
          {
            ...actorEntry(actor),
            action: role !== target.role ? 'role_changed' : 'updated',
            itemType: 'member',
            itemId: userId,
            detail: { email: target.email, from: target.role, to: role, bot_ids: row.bot_ids, can_view_original: row.can_view_original },
          },
          trx,
        )
        return presentMember(row)
      })
    },

    async removeMember(tenantId: string, actor: Actor & { role: Role }, userId: string): Promise<void> {
      if (actor.userId === userId) throw forbidden('You cannot remove yourself from the workspace', 'remove_self')
      const now = clock.now()
      await db.transaction().execute(async (trx) => {
        await repo.lockTenant(tenantId, trx)
        const target = await repo.findMember(tenantId, userId, trx)
        if (!target) throw notFound('Member not found')
        if (leavesNoOwner(target, { role: null }, await repo.countOwners(tenantId, trx))) throw conflict(LAST_OWNER, 'last_owner')
        if (target.role === 'owner' && actor.role !== 'owner') throw forbidden(`Your role (${actor.role}) may not remove an owner`)
        const me = await actingMember(tenantId, actor, trx)
        if (target.role === 'owner' && me.role !== 'owner') throw forbidden(`Your role (${me.role}) may not remove an owner`)
        if (!(await repo.removeMember(tenantId, userId, now, trx))) throw notFound('Member not found')
        await audit.record(
          tenantId,
          { ...actorEntry(actor), action: 'removed', itemType: 'member', itemId: userId, detail: { email: target.email, role: target.role } },
          trx,
        )
      })
    },

    /** The owner hands the workspace to an admin, who becomes owner; the caller becomes admin. */
    async transferOwnership(tenantId: string, actor: Actor, userId: string) {
      if (actor.userId === userId) throw badRequest('You already own this workspace; name an admin', 'transfer_to_self')
      const now = clock.now()
      return db.transaction().execute(async (trx) => {
        await repo.lockTenant(tenantId, trx)
        const me = actor.userId ? await repo.findMember(tenantId, actor.userId, trx) : undefined
        if (!me) throw unauthorized('Invalid or expired token')
        if (me.role !== 'owner') throw forbidden(`Your role (${me.role}) may not transfer ownership`)
        const target = await repo.findMember(tenantId, userId, trx)
        if (!target) throw notFound('Member not found')
        if (target.role !== 'admin') throw badRequest(`Ownership goes to an admin; ${target.email} is ${target.role}: make them admin first`, 'not_an_admin')
        const owner = await repo.updateMember(tenantId, userId, { role: 'owner', bot_ids: null }, now, trx)
        const previous = await repo.updateMember(tenantId, me.id, { role: 'admin', bot_ids: null }, now, trx)
        await repo.setOwnerOfRecord(tenantId, userId, now, trx)
        await audit.record(
          tenantId,
          { ...actorEntry(actor), action: 'ownership_transferred', itemType: 'member', itemId: userId, detail: { from: me.email, to: target.email } },
          trx,
        )
        return { owner: presentMember(owner!), previous_owner: presentMember(previous!) }
      })
    },

    async listInvitations(tenantId: string) {
      const now = clock.now()
      return { items: (await repo.listInvitations(tenantId)).map((i) => presentInvitation(i, now)) }
    },

    async invite(
      tenantId: string,
      actor: Actor & { role: Role },
      input: { email: string; role: Role; bot_ids?: string[] | null; can_view_original?: boolean },
    ) {
      const email = normalizeEmail(input.email)
      if (input.role === 'owner' && actor.role !== 'owner') throw forbidden(`Your role (${actor.role}) may not invite an owner`)
      await checkScope(tenantId, input.role, input.bot_ids, 'bot_ids')
      const existing = await deps.users.findUserByEmail(email)
      if (existing?.tenant_id === tenantId) throw conflict(`${email} is already a member of this workspace`, 'already_member')
      if (existing?.tenant_id) throw conflict(`${email} already belongs to a workspace; a user belongs to one workspace`, 'has_workspace')
      const token = randomToken()
      const now = clock.now()
      return db.transaction().execute(async (trx) => {
        const inv = await repo.insertInvitation(
          tenantId,
          {
            email,
            role: input.role,
            bot_ids: unscopedRole(input.role) ? null : (input.bot_ids ?? null),
            can_view_original: input.can_view_original ?? false,
            token_hash: sha256Hex(token),
            expires_at: addSeconds(now, INVITATION_TTL_SECONDS),
            invited_by_user_id: actor.userId,
          },
          now,
          trx,
        )
        await queueInvitationMail(tenantId, inv, token, actor, trx)
        await audit.record(
          tenantId,
          { ...actorEntry(actor), action: 'invited', itemType: 'invitation', itemId: inv.id, detail: { email, role: input.role } },
          trx,
        )
        return presentInvitation(inv, now)
      })
    },

    async revokeInvitation(tenantId: string, actor: Actor, id: string): Promise<void> {
      const inv = await repo.findInvitation(tenantId, id)
      if (!inv) throw notFound('Invitation not found')
      if (inv.status === 'accepted') throw conflict('This invitation has already been accepted; remove the member instead', 'invitation_used')
      if (inv.status === 'revoked') return
      const now = clock.now()
      await db.transaction().execute(async (trx) => {
        if (await repo.revokeInvitation(tenantId, id, now, trx))
          await audit.record(
            tenantId,
            { ...actorEntry(actor), action: 'invitation_revoked', itemType: 'invitation', itemId: id, detail: { email: inv.email } },
            trx,
          )
      })
    },

    /** A new link (the earlier one stops working) valid 7 days from now, mailed again. */
    async resendInvitation(tenantId: string, actor: Actor, id: string) {
      const inv = await repo.findInvitation(tenantId, id)
      if (!inv) throw notFound('Invitation not found')
      const problem = inv.status === 'pending' ? null : invitationProblem(inv.status)
      if (problem) throw conflict(problem.message, problem.code)
      const token = randomToken()
      const now = clock.now()
      return db.transaction().execute(async (trx) => {
        const renewed = await repo.renewInvitation(
          tenantId,
          id,
          { token_hash: sha256Hex(token), expires_at: addSeconds(now, INVITATION_TTL_SECONDS) },
          now,
          trx,
        )
        if (!renewed) throw conflict('This invitation is no longer pending', 'invitation_closed')
        await queueInvitationMail(tenantId, renewed, token, actor, trx)
        await audit.record(
          tenantId,
          { ...actorEntry(actor), action: 'invitation_resent', itemType: 'invitation', itemId: id, detail: { email: inv.email } },
          trx,
        )
        return presentInvitation(renewed, now)
      })
    },

    /**
     * Joins the invitation's workspace: a new account with the given password, or the existing account of
     * the invited address when the caller is signed in as it or gives its password. Answers like login.
     */
    async accept(token: string, opts: { password?: string; sessionUser: { id: string; email: string } | null; ip: string | null }) {
      const inv = await repo.findInvitationByToken(sha256Hex(token))
      if (!inv) throw badRequest('Invalid invitation link', 'invalid_token')
      const problem = invitationProblem(invitationState(inv, clock.now()))
      if (problem) throw badRequest(problem.message, problem.code)
      const existing = await deps.users.findUserByEmail(inv.email)
      if (existing?.tenant_id === inv.tenant_id) throw badRequest('This invitation has already been used', 'invitation_used')
      if (existing?.tenant_id) throw conflict(`${inv.email} already belongs to a workspace; a user belongs to one workspace`, 'has_workspace')
      const password = opts.password || undefined
      if (!password && opts.sessionUser && opts.sessionUser.email !== inv.email) {
        throw forbidden('This invitation is for another address; sign out, or sign in as the invited address', 'wrong_address')
      }
      let passwordHash: string | null = null
      if (existing) {
        const signedIn = !password && opts.sessionUser?.id === existing.id
        if (!signedIn) {
          if (!password) throw unauthorized(`${inv.email} has an account: give its password or sign in to accept`)
          if (!(await passwordMatches(existing.password_hash, password))) throw unauthorized('Incorrect email or password')
        }
      } else {
        if (!password) throw new ValidationError(['body', 'password'], 'Choose a password for your new account', 'missing')
        checkPassword(password, 'password')
        passwordHash = await hashPassword(password)
      }
      const now = clock.now()
      const membership = {
        role: inv.role,
        bot_ids: unscopedRole(inv.role) ? null : inv.bot_ids,
        can_view_original: inv.can_view_original,
      }
      const user = await db.transaction().execute(async (trx) => {
        await repo.lockTenant(inv.tenant_id, trx)
        if (!(await repo.consumeInvitation(inv.id, now, trx))) throw badRequest('This invitation has already been used', 'invitation_used')
        const u = existing
          ? await repo.joinWorkspace(inv.tenant_id, existing.id, membership, now, trx)
          : await repo.insertMemberUser(inv.tenant_id, { email: inv.email, password_hash: passwordHash!, ...membership }, now, trx)
        if (!u) throw conflict(`${inv.email} already belongs to a workspace`, 'has_workspace')
        await audit.record(
          inv.tenant_id,
          {
            actorUserId: u.id,
            ip: opts.ip,
            action: 'joined',
            itemType: 'member',
            itemId: u.id,
            detail: { email: u.email, role: inv.role, invitation_id: inv.id },
          },
          trx,
        )
        return u
      })
      return deps.session(user)
    },
  }
}

const actorEntry = (a: Actor) => ({ actorUserId: a.userId, ip: a.ip })

export type TeamService = ReturnType<typeof createTeamService>
