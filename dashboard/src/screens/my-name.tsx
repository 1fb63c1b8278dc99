import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import { useRole } from '../session'
import { Button, ErrorBox, Field, fieldError } from '../ui/kit'
import { useToast } from '../ui/toast'

/**
 * The member's own name as visitors see it (#39) on messages, "joined the conversation" and resolution
 * replies. Empty: the bot's name + " team" (never the part of the e-mail before the @).
 */
export function MyDisplayName() {
  const { me } = useRole()
  if (!me) return null
  return <NameForm key={me.display_name ?? ''} initial={me.display_name ?? ''} />
}

function NameForm({ initial }: { initial: string }) {
  const [name, setName] = useState(initial)
  const qc = useQueryClient()
  const toast = useToast()
  const save = useMutation({
    mutationFn: () => call(api.PATCH('/auth/me', { body: { display_name: name.trim() || null } })),
    onSuccess: (u) => {
      qc.setQueryData(['me'], u)
      toast(u.display_name ? `Visitors now see you as ${u.display_name}` : 'Visitors now see the team name')
    },
  })
  const err = fieldError(save.error, 'display_name')
  return (
    <form
      className="my-name row"
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
      noValidate
    >
      <Field
        label="Your name shown to visitors"
        maxLength={80}
        value={name}
        placeholder="e.g. Kim"
        onChange={(e) => setName(e.target.value)}
        error={err}
        hint={`Shown on your messages and replies. Empty: your bot's name + " team".`}
      />
      <Button type="submit" busy={save.isPending}>
        Save name
      </Button>
      <ErrorBox error={save.error && !err ? save.error : null} />
    </form>
  )
}
