import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import { Button, Check, ErrorBox, Field, fieldError, Loading } from '../ui/kit'
import { useToast } from '../ui/toast'

/**
 * Who gets a conversation that enters the queue (#39): auto-assignment to the online agent with the fewest
 * open conversations, and how many an agent is given at most. Owners and admins (the support settings'
 * permission); the rest of the support settings keep their own form.
 */
export function RoutingSettings() {
  const q = useQuery({ queryKey: ['support-settings'], queryFn: () => call(api.GET('/tenants/me/support-settings')) })
  if (q.isPending) return <Loading />
  if (q.isError) return <ErrorBox error={q.error} retry={() => q.refetch()} />
  return <RoutingForm key={`${q.data.auto_assign}|${q.data.agent_capacity}`} auto={q.data.auto_assign} capacity={q.data.agent_capacity} />
}

function RoutingForm({ auto, capacity }: { auto: boolean; capacity: number }) {
  const [on, setOn] = useState(auto)
  const [cap, setCap] = useState(String(capacity))
  const qc = useQueryClient()
  const toast = useToast()
  const save = useMutation({
    mutationFn: () => call(api.PUT('/tenants/me/support-settings', { body: { auto_assign: on, agent_capacity: Number(cap) } })),
    onSuccess: (s) => {
      qc.setQueryData(['support-settings'], s)
      toast(s.auto_assign ? `Auto-assignment on: up to ${s.agent_capacity} conversations per agent` : 'Auto-assignment off')
    },
  })
  const capErr = fieldError(save.error, 'agent_capacity')
  const capNumber = Number(cap)
  const localErr = cap.trim() === '' || !Number.isInteger(capNumber) || capNumber < 1 || capNumber > 50 ? 'A whole number from 1 to 50.' : undefined
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        if (!localErr) save.mutate()
      }}
      noValidate
    >
      <Check
        label="Assign waiting conversations automatically"
        hint="The oldest waiting conversation goes to the online agent (bot access respected) with the fewest open conversations. Visitors who left are skipped."
        checked={on}
        onChange={setOn}
      />
      <Field
        label="Conversations per agent at most"
        type="number"
        inputMode="numeric"
        min={1}
        max={50}
        value={cap}
        onChange={(e) => setCap(e.target.value)}
        error={capErr ?? (save.isIdle ? undefined : localErr)}
        hint="Auto-assignment gives an agent no more open conversations than this (1 to 50)."
      />
      <ErrorBox error={save.error && !capErr ? save.error : null} />
      <Button type="submit" variant="primary" busy={save.isPending} disabled={Boolean(localErr)}>
        Save routing
      </Button>
    </form>
  )
}
