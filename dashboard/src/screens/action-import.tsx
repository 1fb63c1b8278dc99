import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { Link } from 'wouter'
import { api, call, messageOf } from '../api/client'
import { Badge, Button, Field, TextArea } from '../ui/kit'

/** Import from an OpenAPI document (pasted or read from a file): one disabled action per operation. */
export function ImportOpenApi({ onDone }: { onDone: () => void }) {
  const [spec, setSpec] = useState('')
  const [baseUrl, setBaseUrl] = useState('')
  const fileId = useId()
  const qc = useQueryClient()
  const run = useMutation({
    mutationFn: () => call(api.POST('/actions/import-openapi', { body: { spec, ...(baseUrl.trim() ? { base_url: baseUrl.trim() } : {}) } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['actions'] }),
  })
  return (
    <form
      className="card"
      aria-label="Import from OpenAPI"
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        run.mutate()
      }}
    >
      <h2>Import from OpenAPI</h2>
      <TextArea label="OpenAPI document (JSON or YAML)" rows={8} value={spec} onChange={(e) => setSpec(e.target.value)} />
      <div className="field">
        <label htmlFor={fileId}>Or read it from a file</label>
        <input
          id={fileId}
          type="file"
          accept=".json,.yaml,.yml,application/json,text/yaml"
          onChange={async (e) => {
            const f = e.target.files?.[0]
            if (f) setSpec(await f.text())
          }}
        />
      </div>
      <Field
        label="Base URL (optional)"
        hint="Joined to a relative or missing server URL of the document."
        value={baseUrl}
        onChange={(e) => setBaseUrl(e.target.value)}
      />
      {run.isError && (
        <p className="field-error" role="alert">
          {messageOf(run.error)}
        </p>
      )}
      {run.isSuccess && (
        <div role="status">
          <p>{run.data.items.length} actions created, all disabled: check each one and enable it.</p>
          <ul>
            {run.data.items.map((a) => (
              <li key={a.id}>
                <Link href={`/actions/${a.id}`}>{a.name}</Link> <Badge>{a.kind}</Badge> <Badge>disabled</Badge>
              </li>
            ))}
          </ul>
        </div>
      )}
      <div className="row">
        <Button type="submit" variant="primary" busy={run.isPending} disabled={spec.trim().length < 2}>
          Import
        </Button>
        <Button onClick={onDone}>Close</Button>
      </div>
    </form>
  )
}
