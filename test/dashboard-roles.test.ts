import { describe, expect, it } from 'vitest'
import * as dashboard from '../dashboard/src/roles.js'
import * as service from '../src/http/permissions.js'

// The dashboard shows each role only the menus and controls the service allows it; its copy of the role
// table must say exactly what the service enforces, or a member sees a menu that answers 403 (or misses one).
describe('dashboard role table', () => {
  it('matches the service’s roles and permissions', () => {
    expect([...dashboard.ROLES]).toEqual([...service.ROLES])
    expect(dashboard.PERMISSIONS).toEqual(service.PERMISSIONS)
    for (const role of service.ROLES)
      for (const p of Object.keys(service.PERMISSIONS) as service.Permission[])
        expect(dashboard.roleMay(role, p), `${role} ${p}`).toBe(service.roleMay(role, p))
  })

  it('speaks the service’s 403 sentence and treats an account without a role as its owner', () => {
    expect(dashboard.forbiddenText('agent', 'members')).toBe('Your role (agent) may not manage members.')
    expect(dashboard.roleOf(null)).toBe('owner')
    expect(dashboard.roleOf({ role: 'analyst' })).toBe('analyst')
  })
})
