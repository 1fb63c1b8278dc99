import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import type { Action } from './action-types'

/**
 * An action's enable switch, shown as wanted from the click on: the wish is React state set inside the change
 * event, so the controlled checkbox never snaps back while the PATCH and the refetch run (a mutation's own pending
 * state reaches React a tick later, and the server's value only after the refetch). Back to the server's value when
 * the call ends, with the error kept to show.
 */
export function useEnabledToggle(a: Action) {
  const qc = useQueryClient()
  const [wanted, setWanted] = useState<boolean | null>(null)
  const m = useMutation({
    mutationFn: (enabled: boolean) => call(api.PATCH('/actions/{id}', { params: { path: { id: a.id } }, body: { enabled } })),
    onSuccess: async () => {
      await Promise.all([qc.invalidateQueries({ queryKey: ['action', a.id] }), qc.invalidateQueries({ queryKey: ['actions'] })])
    },
    onSettled: () => setWanted(null),
  })
  return {
    checked: wanted ?? a.enabled,
    busy: m.isPending,
    error: m.isError ? m.error : null,
    set(enabled: boolean) {
      if (m.isPending) return
      setWanted(enabled)
      m.mutate(enabled)
    },
  }
}
