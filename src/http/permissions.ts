/**
 * Roles of a workspace member and what each may do (the team workspace issue's table, contract section
 * "Team workspace"). Routes name one permission through `guards.can(permission)`; the guard answers 403
 * `Your role (<role>) may not <what>` for a role without it. An X-API-Key caller is the workspace itself.
 *
 * Decisions beyond the table (test/roles.test.ts holds the route-by-route rules):
 * - Reading bots (`GET /bots`, `/bots/{id}`, its disclosure) is `member`: agents and analysts pick a bot to
 *   filter their inbox and figures; they see only their bots. Changing bots is `settings`.
 * - `GET /tenants/me` (the workspace's name), `GET /tenants/me/members` (the inbox names assignees),
 *   `GET /llm/status` and `GET /auth/me/widget-token` (their bots only) are `member`.
 * - `PATCH /tenants/me` is `settings`, or `workspace` when it sets the model key; creating and rotating the
 *   signing secret and the API keys are `workspace`; the signing secret's status (whether one is set, its
 *   masked hint: admins need to know whether identity verification is on, and it gives nothing away), privacy
 *   and support settings and the PII retention run are `settings`; the PII event trail is `audit`.
 * - Conversations, their feedback and the bad-answers list are `tickets` (they show visitors' words).
 * - Showing original (unredacted) text: owners and admins always, agents when granted (`can_view_original`
 *   on the member), else 403.
 * - A member limited to some bots (`bot_ids`) gets 404 for other bots' bots, tickets and conversations, and
 *   lists without them; owners and admins are never limited. Documents, sites, FAQ and gaps are the
 *   workspace's (not per bot).
 */
export const ROLES = ['owner', 'admin', 'editor', 'agent', 'analyst'] as const
export type Role = (typeof ROLES)[number]

export const PERMISSIONS = {
  /** model key, API keys, creating and rotating the signing secret, delete workspace, transfer ownership */
  workspace: { roles: ['owner'], what: 'manage the workspace keys and ownership' },
  /** invite, change roles, remove members */
  members: { roles: ['owner', 'admin'], what: 'manage members' },
  /** bots, privacy settings, support settings, the signing secret's status */
  settings: { roles: ['owner', 'admin'], what: 'change bots or settings' },
  /** outbound webhooks and Slack */
  integrations: { roles: ['owner', 'admin'], what: 'manage integrations' },
  /** actions (the workspace's APIs the bot calls): define, import, live test, the signing secret */
  actions: { roles: ['owner', 'admin'], what: 'manage actions' },
  /** actions: read them, their call log, and dry-run tests */
  actions_test: { roles: ['owner', 'admin', 'editor'], what: 'test actions' },
  /** the audit log */
  audit: { roles: ['owner', 'admin'], what: 'read the audit log' },
  /** documents, websites, FAQ, gaps, knowledge profile */
  knowledge: { roles: ['owner', 'admin', 'editor'], what: 'change the knowledge' },
  /** evaluations: write test cases and start runs */
  evals: { roles: ['owner', 'admin', 'editor'], what: 'run evaluations' },
  /** evaluations: read cases, runs and their results */
  evals_read: { roles: ['owner', 'admin', 'editor', 'analyst'], what: 'read evaluations' },
  /** tickets and conversations: read, reply, resolve, assign */
  tickets: { roles: ['owner', 'admin', 'agent'], what: 'work on tickets and conversations' },
  /** saved replies: write, change, delete (#39) */
  saved_replies: { roles: ['owner', 'admin', 'editor'], what: 'manage saved replies' },
  /** saved replies: read, to insert them in the composer */
  saved_replies_read: { roles: ['owner', 'admin', 'editor', 'agent'], what: 'use saved replies' },
  /** analytics and exports */
  analytics: { roles: ['owner', 'admin', 'analyst'], what: 'see analytics and exports' },
  /** any signed-in member of the workspace (reading the workspace's name, one's own profile) */
  member: { roles: ['owner', 'admin', 'editor', 'agent', 'analyst'], what: 'use this workspace' },
} as const satisfies Record<string, { roles: readonly Role[]; what: string }>
export type Permission = keyof typeof PERMISSIONS

export function roleMay(role: Role, permission: Permission): boolean {
  return (PERMISSIONS[permission].roles as readonly Role[]).includes(role)
}
