import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import type { Tenant } from '../api/types'
import { Badge, Button, ErrorBox, Field, fieldError, When } from '../ui/kit'
import { useToast } from '../ui/toast'

export function embedSnippet(publicId: string): string {
  return `<script src="${location.origin}/embed.js" data-bot-id="${publicId}" async></script>`
}

/** Sets, replaces or removes the tenant's model key; the key itself is never shown again, only its hint. */
export function ModelKeyForm({ tenant }: { tenant: Tenant }) {
  const [key, setKey] = useState('')
  const qc = useQueryClient()
  const toast = useToast()
  const save = useMutation({
    mutationFn: (value: string | null) => call(api.PATCH('/tenants/me', { body: { llm_api_key: value } })),
    onSuccess: (t) => {
      qc.setQueryData(['tenant'], t)
      setKey('')
      toast(t.has_llm_key ? 'Model key saved' : 'Model key removed')
    },
  })
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate(key.trim())
      }}
      noValidate
    >
      <p>
        {tenant.has_llm_key ? (
          <>
            A key is set: <code>{tenant.llm_key_hint ?? '••••'}</code>. Enter a new one to replace it.
          </>
        ) : (
          'Your bot needs a model key to answer. It is stored encrypted and never shown again.'
        )}
      </p>
      <Field
        label="Model API key"
        type="password"
        autoComplete="off"
        placeholder="sk-…"
        value={key}
        onChange={(e) => setKey(e.target.value)}
        error={fieldError(save.error, 'llm_api_key')}
        hint="The service sends it to the model server set by LLM_BASE_URL (OpenAI by default; Ollama, vLLM or LiteLLM when the operator of this service points it there)."
      />
      <ErrorBox error={save.error && !fieldError(save.error, 'llm_api_key') ? save.error : null} />
      <div className="row">
        <Button type="submit" variant="primary" busy={save.isPending && save.variables !== null} disabled={!key.trim()}>
          Save key
        </Button>
        {tenant.has_llm_key && (
          <Button
            variant="danger"
            busy={save.isPending && save.variables === null}
            onClick={() => confirm('Remove the model key? The bot stops answering until a new one is set.') && save.mutate(null)}
          >
            Remove key
          </Button>
        )}
      </div>
    </form>
  )
}

const STATE_WORDS = { ok: 'answering', unreachable: 'unreachable', error: 'failing', unknown: 'not checked yet' } as const

/**
 * Where the model requests go (LLM_BASE_URL, set by whoever runs the service) and whether that server
 * answers, with the fix in words when it does not: the first thing to check when the bot says nothing.
 */
export function ProviderStatus() {
  const qc = useQueryClient()
  const q = useQuery({
    queryKey: ['llm-status'],
    queryFn: () => call(api.GET('/llm/status', { params: { query: { probe: false } } })),
    refetchInterval: 30_000,
  })
  const probe = useMutation({
    mutationFn: () => call(api.GET('/llm/status', { params: { query: { probe: true } } })),
    onSuccess: (s) => qc.setQueryData(['llm-status'], s),
  })
  if (q.isPending) return <p className="muted">Checking the model server…</p>
  if (q.isError) return <ErrorBox error={q.error} retry={() => q.refetch()} />
  const s = q.data
  const tone = s.state === 'ok' ? 'ok' : s.state === 'unknown' ? 'neutral' : 'bad'
  return (
    <div className="notice provider-status">
      <p>
        Model server <code>{s.base_url}</code> (set by <code>{s.variable}</code>): <Badge tone={tone}>{STATE_WORDS[s.state]}</Badge>{' '}
        <span className="muted">
          chat model <code>{s.chat_model}</code>, embeddings <code>{s.embedding_model}</code>
        </span>
      </p>
      {s.state !== 'ok' && s.hint && <p>{s.hint}</p>}
      {s.last_error && s.state !== 'ok' && (
        <p className="muted">
          Last error <When at={s.last_error.at} />: {s.last_error.message}
        </p>
      )}
      <Button small busy={probe.isPending} onClick={() => probe.mutate()}>
        Check again
      </Button>
      <ErrorBox error={probe.error} />
    </div>
  )
}
