import { tokenFromMail } from '../fakes/smtp.js'
import type { TestApp } from './app.js'
import { PASSWORD, uniqueEmail, type Tenant } from './factories.js'
import type { Api } from './http.js'

export const ROLES = ['owner', 'admin', 'editor', 'agent', 'analyst'] as const
export type Role = (typeof ROLES)[number]

export interface Member {
  api: Api
  email: string
  userId: string
  token: string
  role: Role
}

/** The invitation mail to `email` (the newest, so a resent link wins). */
export async function invitationMail(t: TestApp, email: string, after = 0) {
  await t.smtp.waitFor((m) => m.to.includes(email) && /invited/i.test(m.subject) && t.smtp.mails.indexOf(m) >= after)
  const mails = t.smtp.mails.filter((m) => m.to.includes(email) && /invited/i.test(m.subject))
  return mails[mails.length - 1]!
}

/** Invites `role` into the owner's workspace through the API, reads the mail and accepts with a new password. */
export async function addMember(
  t: TestApp,
  owner: Pick<Tenant, 'api'>,
  role: Role,
  opts: { botIds?: string[] | null; canViewOriginal?: boolean } = {},
): Promise<Member> {
  const email = uniqueEmail(role)
  const inv = await owner.api.post('/tenants/me/invitations', {
    email,
    role,
    ...(opts.botIds !== undefined ? { bot_ids: opts.botIds } : {}),
    ...(opts.canViewOriginal !== undefined ? { can_view_original: opts.canViewOriginal } : {}),
  })
  if (inv.status !== 201) throw new Error(`invite failed: ${inv.status} ${inv.text}`)
  const token = tokenFromMail(await invitationMail(t, email))
  const api = t.api()
  const accepted = await api.post('/auth/accept-invitation', { token, password: PASSWORD })
  if (accepted.status !== 200) throw new Error(`accept failed: ${accepted.status} ${accepted.text}`)
  api.withToken(accepted.body.token)
  return { api, email, userId: accepted.body.user.id, token: accepted.body.token, role }
}
