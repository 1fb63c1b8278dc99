import { useMutation } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, call, messageOf } from '../api/client'
import { useRole } from '../session'
import { Button } from '../ui/kit'

/**
 * "Make a test from this conversation": its last visitor question becomes an evaluation case, expecting what
 * happened (answered or handed off); shown only to members who may write evaluations.
 */
export function MakeTestFromSession({ sessionId, about }: { sessionId: string; about?: string }) {
  const { may } = useRole()
  const make = useMutation({
    mutationFn: () => call(api.POST('/evals/cases/from-session/{session_id}', { params: { path: { session_id: sessionId } }, body: {} })),
  })
  if (!may('evals')) return null
  if (make.isSuccess)
    return (
      <span role="status" className="small">
        {'Test created. '}
        <Link href="/evals">Open evaluations</Link>
      </span>
    )
  return (
    <span className="row">
      <Button small busy={make.isPending} onClick={() => make.mutate()}>
        Make a test from this conversation
        {about && <span className="sr-only">{` (${about.slice(0, 80)})`}</span>}
      </Button>
      {make.isError && (
        <span className="field-error" role="alert">
          {messageOf(make.error)}
        </span>
      )}
    </span>
  )
}
