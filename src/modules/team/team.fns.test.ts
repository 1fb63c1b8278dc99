import { describe, expect, it } from 'vitest'
import { invitationProblem, invitationState, leavesNoOwner } from './team.fns.js'

const now = new Date('2026-01-10T12:00:00Z')

describe('invitationState', () => {
  it('a pending invitation past its expiry reads as expired; stored states stay', () => {
    expect(invitationState({ status: 'pending', expires_at: new Date('2026-01-10T12:00:01Z') }, now)).toBe('pending')
    expect(invitationState({ status: 'pending', expires_at: now }, now)).toBe('expired')
    expect(invitationState({ status: 'revoked', expires_at: new Date('2026-01-01Z') }, now)).toBe('revoked')
    expect(invitationState({ status: 'accepted', expires_at: new Date('2026-01-01Z') }, now)).toBe('accepted')
  })

  it('names why an invitation cannot be accepted', () => {
    expect(invitationProblem('pending')).toBeNull()
    expect(invitationProblem('expired')?.code).toBe('invitation_expired')
    expect(invitationProblem('accepted')?.code).toBe('invitation_used')
    expect(invitationProblem('revoked')?.code).toBe('invitation_revoked')
  })
})

describe('leavesNoOwner', () => {
  it('only demoting or removing the one remaining owner', () => {
    expect(leavesNoOwner({ role: 'owner' }, { role: 'admin' }, 1)).toBe(true)
    expect(leavesNoOwner({ role: 'owner' }, { role: null }, 1)).toBe(true)
    expect(leavesNoOwner({ role: 'owner' }, { role: 'admin' }, 2)).toBe(false)
    expect(leavesNoOwner({ role: 'owner' }, { role: 'owner' }, 1)).toBe(false)
    expect(leavesNoOwner({ role: 'agent' }, { role: null }, 1)).toBe(false)
  })
})
