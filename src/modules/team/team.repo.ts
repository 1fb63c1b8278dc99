import { sql } from 'kysely'
import type { ChangeFeed } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { Role } from '../../http/permissions.js'
import { conflict } from '../../lib/errors.js'
import { USERS_TOPIC } from '../auth/auth.repo.js'

const MEMBER_COLUMNS = ['id', 'email', 'role', 'bot_ids', 'can_view_original', 'last_active_at', 'created_at', 'token_version'] as const

export interface MembershipPatch {
  role?: Role
  bot_ids?: string[] | null
  can_view_original?: boolean
}

/**
 * Members (users whose tenant_id is the workspace) and invitations. Every write of a member announces the
 * user on the change feed, so every instance's guards drop the cached row and apply the change on the next
 * request. Membership writes that could leave a workspace without an owner run after `lockTenant`.
 */
export function createTeamRepo(db: Db, changes: ChangeFeed) {
  const invitationColumns = [
    'id',
    'email',
    'role',
    'bot_ids',
    'can_view_original',
    'status',
    'expires_at',
    'created_at',
    'invited_by_user_id',
    'tenant_id',
  ] as const

  return {
    listMembers(tenantId: string) {
      return db.selectFrom('users').select(MEMBER_COLUMNS).where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute()
    },

    findMember(tenantId: string, userId: string, trx: Db = db) {
      return trx.selectFrom('users').select(MEMBER_COLUMNS).where('tenant_id', '=', tenantId).where('id', '=', userId).executeTakeFirst()
    },

    /**
     * Serialises the membership changes of one workspace (role, removal, transfer, joining): each takes the
     * tenant row's lock first, so "is there another owner" is answered after any concurrent change committed.
     */
    lockTenant(tenantId: string, trx: Db) {
      return trx.selectFrom('tenants').select(['id', 'name', 'owner_user_id']).where('id', '=', tenantId).forUpdate().executeTakeFirst()
    },

    tenantName(tenantId: string, trx: Db = db) {
      return trx
        .selectFrom('tenants')
        .select('name')
        .where('id', '=', tenantId)
        .executeTakeFirst()
        .then((r) => r?.name ?? null)
    },

    countOwners(tenantId: string, trx: Db) {
      return trx
        .selectFrom('users')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('tenant_id', '=', tenantId)
        .where('role', '=', 'owner')
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },

    async updateMember(tenantId: string, userId: string, patch: MembershipPatch, now: Date, trx: Db) {
      const row = await trx
        .updateTable('users')
        .set({
          ...(patch.role !== undefined ? { role: patch.role } : {}),
          ...(patch.bot_ids !== undefined ? { bot_ids: patch.bot_ids === null ? null : JSON.stringify(patch.bot_ids) } : {}),
          ...(patch.can_view_original !== undefined ? { can_view_original: patch.can_view_original } : {}),
          updated_at: now,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', userId)
        .returning(MEMBER_COLUMNS)
        .executeTakeFirst()
      if (row) await changes.announce(trx, USERS_TOPIC, userId)
      return row
    },

    /**
     * The user leaves the workspace: no tenant, every JWT it holds revoked (token version), its tickets
     * unassigned. The account stays (its address may be invited again, its past replies keep their author).
     */
    async removeMember(tenantId: string, userId: string, now: Date, trx: Db): Promise<boolean> {
      const r = await trx
        .updateTable('users')
        .set((eb) => ({
          tenant_id: null,
          role: 'owner',
          bot_ids: null,
          can_view_original: false,
          token_version: eb('token_version', '+', 1),
          updated_at: now,
        }))
        .where('tenant_id', '=', tenantId)
        .where('id', '=', userId)
        .executeTakeFirst()
      if (Number(r.numUpdatedRows) === 0) return false
      await trx
        .updateTable('escalation_tickets')
        .set({ assignee_user_id: null })
        .where('tenant_id', '=', tenantId)
        .where('assignee_user_id', '=', userId)
        .execute()
      await changes.announce(trx, USERS_TOPIC, userId)
      return true
    },

    async setOwnerOfRecord(tenantId: string, userId: string, now: Date, trx: Db): Promise<void> {
      await trx.updateTable('tenants').set({ owner_user_id: userId, updated_at: now }).where('id', '=', tenantId).execute()
    },

    /** The ids among `botIds` that are not this workspace's bots. */
    async foreignBots(tenantId: string, botIds: string[], trx: Db = db): Promise<string[]> {
      if (!botIds.length) return []
      const rows = await trx.selectFrom('bots').select('id').where('tenant_id', '=', tenantId).where('id', 'in', botIds).execute()
      const own = new Set(rows.map((r) => r.id))
      return botIds.filter((id) => !own.has(id))
    },

    /** An existing account joins the workspace (the accepted invitation proves its address). */
    async joinWorkspace(tenantId: string, userId: string, m: Required<MembershipPatch>, now: Date, trx: Db) {
      const row = await trx
        .updateTable('users')
        .set({
          tenant_id: tenantId,
          role: m.role,
          bot_ids: m.bot_ids === null ? null : JSON.stringify(m.bot_ids),
          can_view_original: m.can_view_original,
          is_verified: true,
          updated_at: now,
        })
        .where('id', '=', userId)
        .where('tenant_id', 'is', null)
        .returningAll()
        .executeTakeFirst()
      if (row) await changes.announce(trx, USERS_TOPIC, userId)
      return row
    },

    async insertMemberUser(tenantId: string, v: { email: string; password_hash: string } & Required<MembershipPatch>, now: Date, trx: Db) {
      try {
        return await trx
          .insertInto('users')
          .values({
            email: v.email,
            password_hash: v.password_hash,
            tenant_id: tenantId,
            is_verified: true,
            role: v.role,
            bot_ids: v.bot_ids === null ? null : JSON.stringify(v.bot_ids),
            can_view_original: v.can_view_original,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow()
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict('This address already has an account; sign in to accept', 'email_exists')
        throw err
      }
    },

    // --- invitations -------------------------------------------------------------------------------

    /** A new invitation; an earlier pending one to the same address is revoked, so only the newest link works. */
    async insertInvitation(
      tenantId: string,
      v: { email: string; token_hash: string; expires_at: Date; invited_by_user_id: string | null } & Required<MembershipPatch>,
      now: Date,
      trx: Db,
    ) {
      await trx
        .updateTable('invitations')
        .set({ status: 'revoked', revoked_at: now, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('email', '=', v.email)
        .where('status', '=', 'pending')
        .execute()
      try {
        return await trx
          .insertInto('invitations')
          .values({
            tenant_id: tenantId,
            email: v.email,
            role: v.role,
            bot_ids: v.bot_ids === null ? null : JSON.stringify(v.bot_ids),
            can_view_original: v.can_view_original,
            token_hash: v.token_hash,
            invited_by_user_id: v.invited_by_user_id,
            expires_at: v.expires_at,
            created_at: now,
            updated_at: now,
          })
          .returning(invitationColumns)
          .executeTakeFirstOrThrow()
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict('An invitation to this address is being sent; try again', 'invitation_pending')
        throw err
      }
    },

    listInvitations(tenantId: string) {
      return db.selectFrom('invitations').select(invitationColumns).where('tenant_id', '=', tenantId).orderBy('created_at', 'desc').limit(500).execute()
    },

    findInvitation(tenantId: string, id: string, trx: Db = db) {
      return trx.selectFrom('invitations').select(invitationColumns).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
    },

    /** By token hash, whatever its state (the caller names the problem). Not tenant-scoped: the token is the key. */
    findInvitationByToken(tokenHash: string, trx: Db = db) {
      return trx.selectFrom('invitations').select(invitationColumns).where('token_hash', '=', tokenHash).executeTakeFirst()
    },

    async revokeInvitation(tenantId: string, id: string, now: Date, trx: Db = db): Promise<boolean> {
      const r = await trx
        .updateTable('invitations')
        .set({ status: 'revoked', revoked_at: now, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },

    /** A new token and a new expiry for a pending (possibly expired) invitation: the earlier link stops working. */
    renewInvitation(tenantId: string, id: string, v: { token_hash: string; expires_at: Date }, now: Date, trx: Db) {
      return trx
        .updateTable('invitations')
        .set({ token_hash: v.token_hash, expires_at: v.expires_at, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .returning(invitationColumns)
        .executeTakeFirst()
    },

    /** Spends the invitation: one statement, so two accepts of one link cannot both succeed. */
    consumeInvitation(id: string, now: Date, trx: Db) {
      return trx
        .updateTable('invitations')
        .set({ status: 'accepted', accepted_at: now, updated_at: now })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now)
        .returning(invitationColumns)
        .executeTakeFirst()
    },
  }
}

export type TeamRepo = ReturnType<typeof createTeamRepo>
export type MemberRow = NonNullable<Awaited<ReturnType<TeamRepo['findMember']>>>
export type InvitationRow = NonNullable<Awaited<ReturnType<TeamRepo['findInvitation']>>>
