import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { ApiError, messageOf, toApiError } from '../api/client'
import type { Res } from '../api/types'
import { Button } from '../ui/kit'

type ImportResult = Res<'/evals/cases/import', 'post'>

/** POST /evals/cases/import (multipart `file`): openapi-fetch does not send a file, so this is a plain fetch. */
async function importFile(file: File): Promise<ImportResult> {
  const form = new FormData()
  form.append('file', file, file.name)
  let r: Response
  try {
    r = await fetch('/evals/cases/import', { method: 'POST', body: form, credentials: 'same-origin', headers: { Accept: 'application/json' } })
  } catch {
    throw new ApiError(0, 'Cannot reach the service. Check your connection and try again.')
  }
  const body = await r.json().catch(() => null)
  if (!r.ok) throw toApiError(r.status, body)
  return body as ImportResult
}

/** Import cases from CSV or JSONL; each refused line is listed with its number and the reason. */
export function ImportCases({ onDone }: { onDone: () => void }) {
  const [file, setFile] = useState<File | null>(null)
  const id = useId()
  const qc = useQueryClient()
  const run = useMutation({
    mutationFn: (f: File) => importFile(f),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['eval-cases'] }),
  })
  return (
    <form
      className="card"
      aria-label="Import test cases"
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        if (file) run.mutate(file)
      }}
    >
      <h2>Import test cases</h2>
      <p className="hint">
        CSV with the header <code>question,expected_outcome,sources,facts,tags</code> (several values separated by <code>|</code>), or JSONL: one case per line
        as the API takes it.
      </p>
      <div className="field">
        <label htmlFor={id}>CSV or JSONL file</label>
        <input id={id} type="file" accept=".csv,.jsonl,.ndjson,text/csv,application/x-ndjson" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
      </div>
      {run.isError && (
        <p className="field-error" role="alert">
          {messageOf(run.error)}
        </p>
      )}
      {run.isSuccess && (
        <div role="status">
          <p>{`${run.data.created} case${run.data.created === 1 ? '' : 's'} created${run.data.errors.length ? `, ${run.data.errors.length} line${run.data.errors.length === 1 ? '' : 's'} refused:` : '.'}`}</p>
          {run.data.errors.length > 0 && (
            <ul className="import-errors">
              {run.data.errors.map((e) => (
                <li key={`${e.line}-${e.message}`}>
                  <strong>{`Line ${e.line}`}</strong>: {e.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <div className="row">
        <Button type="submit" variant="primary" busy={run.isPending} disabled={!file}>
          Import
        </Button>
        <Button onClick={onDone}>Close</Button>
      </div>
    </form>
  )
}
