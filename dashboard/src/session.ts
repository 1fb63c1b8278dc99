import { useQuery } from '@tanstack/react-query'
import { api, ApiError, call } from './api/client'

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
