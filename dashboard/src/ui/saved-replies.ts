import { useQuery } from '@tanstack/react-query'
import { api, call } from '../api/client'
import type { Res } from '../api/types'

export type SavedReply = Res<'/tenants/me/saved-replies', 'get'>['items'][number]

export const SAVED_REPLIES_KEY = ['saved-replies'] as const

/** The workspace's saved replies (one page: a workspace keeps at most 500); read by Settings and the composer's `/` picker. */
export function useSavedReplies(enabled = true) {
  return useQuery({
    queryKey: SAVED_REPLIES_KEY,
    queryFn: () => call(api.GET('/tenants/me/saved-replies')),
    enabled,
    staleTime: 30_000,
  })
}
