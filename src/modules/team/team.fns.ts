import type { Role } from '../../http/permissions.js'

export const INVITATION_TTL_SECONDS = 7 * 86_400

/** Owners and admins see every bot; only the other roles can be limited to some. */
export const unscopedRole = (role: Role): boolean => role === 'owner' || role === 'admin'

export type InvitationState = 'pending' | 'accepted' | 'revoked' | 'expired'

/** A pending invitation past its expiry reads as expired (stored states are pending, accepted, revoked). */
export function invitationState(i: { status: 'pending' | 'accepted' | 'revoked'; expires_at: Date }, now: Date): InvitationState {
  return i.status === 'pending' && i.expires_at.getTime() <= now.getTime() ? 'expired' : i.status
}

/** Why an invitation cannot be accepted, in the words the invitee reads; null when it can. */
export function invitationProblem(state: InvitationState): { code: string; message: string } | null {
  switch (state) {
    case 'pending':
      return null
    case 'accepted':
      return { code: 'invitation_used', message: 'This invitation has already been used' }
    case 'revoked':
      return { code: 'invitation_revoked', message: 'This invitation was revoked; ask the workspace for a new one' }
    case 'expired':
      return { code: 'invitation_expired', message: 'This invitation has expired; ask the workspace to resend it' }
  }
}

/** The role after a change, and whether the change takes away the workspace's last owner. */
export function leavesNoOwner(target: { role: Role }, next: { role: Role | null }, owners: number): boolean {
  return target.role === 'owner' && next.role !== 'owner' && owners <= 1
}
