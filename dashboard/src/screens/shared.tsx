import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import type { Tenant } from '../api/types'
import { Button, ErrorBox, Field, fieldError } from '../ui/kit'
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
          <Button variant="danger" busy={save.isPending && save.variables === null} onClick={() => confirm('Remove the model key? The bot stops answering until a new one is set.') && save.mutate(null)}>
            Remove key
          </Button>
        )}
      </div>
    </form>
  )
}
