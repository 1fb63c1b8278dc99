/**
 * What each role may do: the service's own table (src/http/permissions.ts, which has no imports, so the
 * dashboard bundles it as it is). The service refuses anything else with a 403; the dashboard only uses it to
 * show each member the menus and controls they can use, so a forbidden action is never offered.
 */
import { PERMISSIONS, ROLES, type Permission, type Role, roleMay } from '../../src/http/permissions.js'

export { PERMISSIONS, ROLES, roleMay, type Permission, type Role }

export const ROLE_WORDS: Record<Role, string> = { owner: 'Owner', admin: 'Admin', editor: 'Editor', agent: 'Agent', analyst: 'Analyst' }
export const ROLE_HINTS: Record<Role, string> = {
  owner: 'Everything, including the model key, API keys and ownership.',
  admin: 'Members, bots, settings, knowledge, tickets and analytics; not the keys.',
  editor: 'Knowledge: documents, websites, FAQ, gaps and the profile; writes and runs evaluations.',
  agent: 'Tickets and conversations: read, reply, resolve, take.',
  analyst: 'Analytics and exports; reads evaluations.',
}

/** The signed-in member's role; an account from before roles existed is its workspace's owner. */
export function roleOf(me: { role?: string | null } | null | undefined): Role {
  const r = me?.role ?? ''
  return (ROLES as readonly string[]).includes(r) ? (r as Role) : 'owner'
}

/** The sentence the service answers a 403 with, so the dashboard speaks the same words. */
export const forbiddenText = (role: Role, permission: Permission) => `Your role (${role}) may not ${PERMISSIONS[permission].what}.`
