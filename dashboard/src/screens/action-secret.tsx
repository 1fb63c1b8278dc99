import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import { Button, ErrorBox, Loading } from '../ui/kit'
import { SecretOnce } from '../ui/ops'

/**
 * The workspace's action secret (owners and admins): its masked status, and a rotation whose new value is shown
 * once. Every outbound call is signed with it (Standard Webhooks headers) and its X-Visitor-Token is a JWT under it,
 * so the workspace's API can check both. A rotation stops the previous secret at once, hence the confirmation.
 */
export function ActionSigningSecret() {
  const [fresh, setFresh] = useState<string | null>(null)
  const qc = useQueryClient()
  const q = useQuery({ queryKey: ['action-secret'], queryFn: () => call(api.GET('/actions/signing-secret')) })
  const rotate = useMutation({
    mutationFn: () => call(api.POST('/actions/signing-secret')),
    onSuccess: async (r) => {
      setFresh(r.secret)
      await qc.invalidateQueries({ queryKey: ['action-secret'] })
    },
  })
  const has = q.data?.has_secret ?? false
  return (
    <section className="card" aria-labelledby="action-secret-h">
      <h2 id="action-secret-h">Signing secret</h2>
      <p className="muted">
        Every call to your API carries a <code>webhook-signature</code> and an <code>X-Visitor-Token</code> made with this secret: check them before you answer.
      </p>
      {fresh && (
        <SecretOnce title="Your action signing secret." value={fresh} onDone={() => setFresh(null)}>
          <p>Calls are signed with it from now on; the previous secret no longer signs.</p>
        </SecretOnce>
      )}
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : (
        <dl className="facts">
          <dt>Secret</dt>
          <dd>
            {has ? <code>{q.data.secret_hint ?? '••••'}</code> : <span className="muted">not created yet (made at the first call, or create it now)</span>}
          </dd>
        </dl>
      )}
      <ErrorBox error={rotate.error} />
      <div className="row">
        <Button
          variant={has ? 'secondary' : 'primary'}
          busy={rotate.isPending}
          disabled={q.isPending}
          onClick={() =>
            (!has || confirm('Rotate the action signing secret? The current one stops signing at once: your API must check the new one.')) && rotate.mutate()
          }
        >
          {has ? 'Rotate signing secret' : 'Create signing secret'}
        </Button>
      </div>
    </section>
  )
}
