/**
 * What each role may do, as the service decides it (src/http/permissions.ts, the team workspace issue's
 * table). The service refuses anything else with a 403; the dashboard only uses this to show each member
 * the menus and controls they can use, so a forbidden action is never offered. test/dashboard-roles.test.ts
 * keeps the two tables equal. No imports: that test loads this file in Node.
 */
export const ROLES = ['owner', 'admin', 'editor', 'agent', 'analyst'] as const
export type Role = (typeof ROLES)[number]

export const PERMISSIONS = {
  workspace: { roles: ['owner'], what: 'manage the workspace keys and ownership' },
  members: { roles: ['owner', 'admin'], what: 'manage members' },
  settings: { roles: ['owner', 'admin'], what: 'change bots or settings' },
  integrations: { roles: ['owner', 'admin'], what: 'manage integrations' },
  audit: { roles: ['owner', 'admin'], what: 'read the audit log' },
  knowledge: { roles: ['owner', 'admin', 'editor'], what: 'change the knowledge' },
  tickets: { roles: ['owner', 'admin', 'agent'], what: 'work on tickets and conversations' },
  analytics: { roles: ['owner', 'admin', 'analyst'], what: 'see analytics and exports' },
  member: { roles: ['owner', 'admin', 'editor', 'agent', 'analyst'], what: 'use this workspace' },
} as const satisfies Record<string, { roles: readonly Role[]; what: string }>
export type Permission = keyof typeof PERMISSIONS

export const ROLE_WORDS: Record<Role, string> = { owner: 'Owner', admin: 'Admin', editor: 'Editor', agent: 'Agent', analyst: 'Analyst' }
export const ROLE_HINTS: Record<Role, string> = {
  owner: 'Everything, including the model key, API keys and ownership.',
  admin: 'Members, bots, settings, knowledge, tickets and analytics; not the keys.',
  editor: 'Knowledge: documents, websites, FAQ, gaps and the profile.',
  agent: 'Tickets and conversations: read, reply, resolve, take.',
  analyst: 'Analytics and exports.',
}

/** The signed-in member's role; an account from before roles existed is its workspace's owner. */
export function roleOf(me: { role?: string | null } | null | undefined): Role {
  const r = me?.role ?? ''
  return (ROLES as readonly string[]).includes(r) ? (r as Role) : 'owner'
}

export function roleMay(role: Role, permission: Permission): boolean {
  return (PERMISSIONS[permission].roles as readonly Role[]).includes(role)
}

/** The sentence the service answers a 403 with, so the dashboard speaks the same words. */
export const forbiddenText = (role: Role, permission: Permission) => `Your role (${role}) may not ${PERMISSIONS[permission].what}.`
