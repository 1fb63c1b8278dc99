import { useQuery } from '@tanstack/react-query'
import { api, call } from '../api/client'
import { useRole } from '../session'

/**
 * Titles of the workspace's documents by id (uploaded files and crawled pages), for naming the sources an answer
 * drew from. Only roles that may list the knowledge get them (null otherwise: show "a document", not an id).
 */
export function useDocumentTitles(): Map<string, string> | null {
  const { may } = useRole()
  const allowed = may('knowledge')
  const docs = useQuery({ queryKey: ['documents'], queryFn: () => call(api.GET('/documents')), staleTime: 60_000, enabled: allowed })
  return allowed ? new Map((docs.data?.documents ?? []).map((d) => [d.id, d.title || d.filename])) : null
}
