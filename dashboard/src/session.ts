import { useQuery } from '@tanstack/react-query'
import { api, ApiError, call } from './api/client'
import type { Me } from './api/types'
import { type Permission, type Role, roleMay, roleOf } from './roles'

/** The signed-in user, or null when the cookie is missing or expired (401). */
export function useMe() {
  return useQuery({
    queryKey: ['me'],
    queryFn: async () => {
      try {
        return await call(api.GET('/auth/me'))
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return null
        throw err
      }
    },
    staleTime: 60_000,
  })
}

export function useTenant(enabled = true) {
  return useQuery({ queryKey: ['tenant'], queryFn: () => call(api.GET('/tenants/me')), enabled })
}

export function useBots() {
  return useQuery({ queryKey: ['bots'], queryFn: () => call(api.GET('/bots')) })
}

/** Logs out and reloads into the login screen, so nothing of the session stays in memory. */
export function useLogout() {
  return async () => {
    await call(api.POST('/auth/logout')).catch(() => {})
    location.assign('/app/login')
  }
}

/**
 * The signed-in member's role and a check of one permission, for menus and controls: the permissions
 * `/auth/me` lists for the caller, or the role table when an older service does not list them.
 */
export function useRole(): { role: Role; may: (p: Permission) => boolean; me: Me | null | undefined } {
  const me = useMe().data
  const role = roleOf(me)
  const granted = (me as { permissions?: readonly string[] } | null | undefined)?.permissions
  return { role, me, may: (p) => (granted ? granted.includes(p) : roleMay(role, p)) }
}

/** Whether this member may show visitors' original (unredacted) text: owners and admins, agents when granted. */
export function useMaySeeOriginal(): boolean {
  const { role, me } = useRole()
  if (role === 'owner' || role === 'admin') return true
  return role === 'agent' && !!(me as { can_view_original?: boolean } | null | undefined)?.can_view_original
}
