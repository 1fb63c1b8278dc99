import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { useLocation } from 'wouter'
import { api, ApiError, call, messageOf } from '../api/client'
import { Button, Check, Field, fieldError, Select, TextArea } from '../ui/kit'
import { BotScopePicker } from '../ui/team'
import { addField, PLAIN_TYPES, type PlainParameter, plainOf, sampleFields, schemaOf } from './action-plain'
import { type Action, type ActionInput, headersFromText, headersToText, METHODS, parseJson, SOURCES, type Source } from './action-types'

/**
 * The create and edit form of an action. A 422 from the service is shown beside the field it names
 * (`name`, `url`, `parameters.2.schema`…); secrets are password inputs that are never filled back: the form
 * shows the stored mask and sends only what is typed.
 */
interface Row {
  name: string
  source: Source
  claim: string
  value: string
  schema: string
  required: boolean
  /** JSON Schema typed by hand (the advanced view); forced when the plain fields cannot say the schema */
  advanced: boolean
}

const rowOf = (p: Action['parameters'][number]): Row => ({
  name: p.name,
  source: p.source,
  claim: p.claim ?? '',
  value: p.value === null || p.value === undefined ? '' : String(p.value),
  schema: JSON.stringify(p.schema ?? {}),
  required: p.required,
  advanced: plainOf(p.schema ?? {}) === null,
})
const emptyRow = (): Row => ({ name: '', source: 'model', claim: '', value: '', schema: '{"type":"string"}', required: true, advanced: false })

/** The plain fields of a row's schema text, or null when it is not JSON or says more than they can. */
const plainOfText = (text: string) => {
  const s = parseJson(text, 'The schema')
  return s.error ? null : plainOf(s.value ?? {})
}

/** Type, description and pattern: what most parameters need, without JSON Schema. */
function PlainFields({ r, n, set, error }: { r: Row; n: number; set: (r: Row) => void; error: (f: string) => string | undefined }) {
  const p = plainOfText(r.schema) ?? { type: 'string' as const, description: '', pattern: '' }
  const put = (next: PlainParameter) => set({ ...r, schema: JSON.stringify(schemaOf(next)) })
  return (
    <>
      <Select
        label={`Parameter ${n} type`}
        value={p.type}
        options={PLAIN_TYPES.map((t) => [t, TYPE_WORDS[t]] as const)}
        onChange={(type) => put({ ...p, type })}
      />
      <Field
        label={`Parameter ${n} description`}
        hint="What the value is, for the model: e.g. The order number, as on the receipt."
        value={p.description}
        onChange={(e) => put({ ...p, description: e.target.value })}
        error={error('schema')}
      />
      {p.type === 'string' && (
        <Field
          label={`Parameter ${n} pattern`}
          hint="Optional: a regular expression the value must match, e.g. ^ORD-[0-9]+$"
          value={p.pattern}
          onChange={(e) => put({ ...p, pattern: e.target.value })}
        />
      )}
    </>
  )
}

const TYPE_WORDS: Record<(typeof PLAIN_TYPES)[number], string> = { string: 'Text', integer: 'Whole number', number: 'Number', boolean: 'Yes or no' }

function ParameterRow({
  r,
  i,
  set,
  remove,
  error,
}: {
  r: Row
  i: number
  set: (r: Row) => void
  remove: () => void
  error: (f: string) => string | undefined
}) {
  const n = i + 1
  return (
    <fieldset className="card">
      <legend>Parameter {n}</legend>
      <div className="grid-2">
        <Field label={`Parameter ${n} name`} value={r.name} onChange={(e) => set({ ...r, name: e.target.value })} error={error('name')} />
        <Select label={`Parameter ${n} source`} value={r.source} options={SOURCES} onChange={(source) => set({ ...r, source })} />
        {r.source === 'visitor' && (
          <Field
            label={`Parameter ${n} claim`}
            hint="The claim of the visitor's signed identity token, e.g. user_id."
            value={r.claim}
            onChange={(e) => set({ ...r, claim: e.target.value })}
            error={error('claim')}
          />
        )}
        {r.source === 'constant' && (
          <Field label={`Parameter ${n} value`} value={r.value} onChange={(e) => set({ ...r, value: e.target.value })} error={error('value')} />
        )}
        {r.advanced ? (
          <TextArea
            label={`Parameter ${n} schema (JSON)`}
            rows={2}
            value={r.schema}
            onChange={(e) => set({ ...r, schema: e.target.value })}
            error={error('schema')}
          />
        ) : (
          <PlainFields r={r} n={n} set={set} error={error} />
        )}
      </div>
      <div className="row">
        <Check label={`Parameter ${n} required`} checked={r.required} onChange={(required) => set({ ...r, required })} />
        <Check
          label={`Parameter ${n}: edit as JSON Schema`}
          hint={r.advanced && !plainOfText(r.schema) ? 'This schema says more than the plain fields can.' : undefined}
          checked={r.advanced}
          onChange={(advanced) => set({ ...r, advanced: advanced || !plainOfText(r.schema) })}
        />
        <Button small variant="ghost" onClick={remove}>
          Remove parameter {n}
        </Button>
      </div>
    </fieldset>
  )
}

/** The fields of the last test's answer: a click adds its JSONPath to the response fields. */
function SamplePicker({ sample, fields, onPick }: { sample?: string | null; fields: string; onPick: (path: string) => void }) {
  const found = sampleFields(sample)
  if (!sample) return <p className="small muted">Run a live test above: the fields of its answer appear here to pick from.</p>
  if (!found.length) return <p className="small muted">The last test's answer is not JSON: type the paths.</p>
  const chosen = new Set(fields.split('\n').map((l) => l.trim()))
  return (
    <div className="stack" aria-label="Fields of the last answer">
      <p className="small">Pick the fields the model should see, from the last test's answer:</p>
      <ul className="row" style={{ listStyle: 'none', padding: 0, flexWrap: 'wrap' }}>
        {found.map((f) => (
          <li key={f.path}>
            <Button small variant={chosen.has(f.path) ? 'ghost' : undefined} onClick={() => onPick(f.path)} disabled={chosen.has(f.path)}>
              {`${f.path}: ${f.preview}`}
            </Button>
          </li>
        ))}
      </ul>
    </div>
  )
}

export function ActionForm({
  action,
  onDone,
  readOnly,
  sample,
}: {
  action?: Action
  onDone?: () => void
  readOnly?: boolean
  /** the response body of the last test, to pick response fields from */
  sample?: string | null
}) {
  const [name, setName] = useState(action?.name ?? '')
  const [description, setDescription] = useState(action?.description ?? '')
  const [method, setMethod] = useState<(typeof METHODS)[number]>(action?.method ?? 'GET')
  const [url, setUrl] = useState(action?.url ?? '')
  const [headers, setHeaders] = useState(headersToText(action?.headers ?? {}))
  const [body, setBody] = useState(action?.body_template ?? '')
  const [rows, setRows] = useState<Row[]>(action?.parameters.map(rowOf) ?? [])
  const [fields, setFields] = useState((action?.response_fields ?? []).join('\n'))
  const [timeout, setTimeoutMs] = useState(String(action?.timeout_ms ?? 10000))
  const [kind, setKind] = useState<'read' | 'write'>(action?.kind ?? 'read')
  const [botIds, setBotIds] = useState<string[] | null>(action?.bot_ids ?? null)
  const [secrets, setSecrets] = useState<Record<string, string>>({})
  const qc = useQueryClient()
  const [, navigate] = useLocation()

  const save = useMutation({
    mutationFn: async () => {
      const bad: Record<string, string> = {}
      const parameters = rows.map((r, i) => {
        const s = parseJson(r.schema, 'The schema')
        if (s.error) bad[`parameters.${i}.schema`] = s.error
        return {
          name: r.name.trim(),
          source: r.source,
          schema: (s.value ?? {}) as Record<string, never>,
          claim: r.source === 'visitor' ? r.claim.trim() || null : null,
          value: r.source === 'constant' ? r.value : null,
          required: r.required,
        }
      })
      if (Object.keys(bad).length) throw new ApiError(422, 'Please fix the marked fields.', 'validation_error', bad)
      const typed = Object.fromEntries(Object.entries(secrets).filter(([k, v]) => v && rows.some((r) => r.source === 'secret' && r.name === k)))
      const input: ActionInput = {
        name: name.trim(),
        description,
        method,
        url: url.trim(),
        headers: headersFromText(headers),
        body_template: body.trim() ? body : null,
        parameters,
        kind,
        bot_ids: botIds?.length ? botIds : null,
        response_fields: fields
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean),
        timeout_ms: Number(timeout),
        ...(Object.keys(typed).length ? { secrets: typed } : {}),
      }
      if (action) return call(api.PATCH('/actions/{id}', { params: { path: { id: action.id } }, body: input }))
      return call(api.POST('/actions', { body: input }))
    },
    onSuccess: async (a) => {
      setSecrets({})
      await qc.invalidateQueries({ queryKey: ['actions'] })
      if (action) await qc.invalidateQueries({ queryKey: ['action', action.id] })
      onDone?.()
      if (!action) navigate(`/actions/${a.id}`)
    },
  })
  const err = (...names: string[]) => fieldError(save.error, ...names)
  const secretNames = rows.filter((r) => r.source === 'secret' && r.name.trim()).map((r) => r.name.trim())

  return (
    <form
      className="card"
      aria-label={action ? `Edit ${action.name}` : 'New action'}
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <h2>{action ? (readOnly ? 'Definition' : 'Edit action') : 'New action'}</h2>
      <fieldset disabled={readOnly} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
        <div className="grid-2">
          <Field
            label="Name"
            hint="The tool name the model sees: lower-case letters, digits and _, starting with a letter."
            value={name}
            onChange={(e) => setName(e.target.value)}
            error={err('name')}
            required
          />
          <Select
            label="Kind"
            value={kind}
            options={
              [
                ['read', 'Read (runs when asked)'],
                ['write', 'Write (the visitor confirms first)'],
              ] as const
            }
            onChange={setKind}
          />
        </div>
        <TextArea
          label="Description"
          hint="When to use it: the model reads this."
          rows={2}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          error={err('description')}
        />
        <div className="grid-2">
          <Select label="Method" value={method} options={METHODS.map((m) => [m, m] as const)} onChange={setMethod} />
          <Field label="URL template" hint="Name parameters as {name}." value={url} onChange={(e) => setUrl(e.target.value)} error={err('url')} />
        </div>
        <TextArea
          label="Headers"
          hint="One per line: Name: value (templates allowed)."
          rows={2}
          value={headers}
          onChange={(e) => setHeaders(e.target.value)}
          error={err('headers')}
        />
        <TextArea label="Body template" rows={3} value={body} onChange={(e) => setBody(e.target.value)} error={err('body_template')} />
        <h3>Parameters</h3>
        {rows.length === 0 && <p className="muted">No parameters.</p>}
        {rows.map((r, i) => (
          <ParameterRow
            key={i}
            r={r}
            i={i}
            set={(next) => setRows(rows.map((x, j) => (j === i ? next : x)))}
            remove={() => setRows(rows.filter((_, j) => j !== i))}
            error={(f) => err(`parameters.${i}.${f}`) ?? (f === 'name' ? err(`parameters.${i}`) : undefined)}
          />
        ))}
        <Button small onClick={() => setRows([...rows, emptyRow()])}>
          Add parameter
        </Button>
        {secretNames.length > 0 && <h3>Secrets</h3>}
        {secretNames.map((s) => (
          <Field
            key={s}
            label={`Secret ${s}`}
            type="password"
            autoComplete="new-password"
            hint={action?.secrets[s] ? `Stored: ${action.secrets[s]}. Type a new value to replace it.` : 'Not stored yet.'}
            value={secrets[s] ?? ''}
            onChange={(e) => setSecrets({ ...secrets, [s]: e.target.value })}
            error={err(`secrets.${s}`, 'secrets')}
          />
        ))}
        <TextArea
          label="Response fields"
          hint="JSONPath per line, e.g. $.status: the model sees only these."
          rows={2}
          value={fields}
          onChange={(e) => setFields(e.target.value)}
          error={err('response_fields')}
        />
        <SamplePicker sample={sample} fields={fields} onPick={(path) => setFields(addField(fields, path))} />
        <Field
          label="Timeout (ms)"
          type="number"
          min={100}
          max={30000}
          value={timeout}
          onChange={(e) => setTimeoutMs(e.target.value)}
          error={err('timeout_ms')}
        />
        <BotScopePicker value={botIds} onChange={setBotIds} error={err('bot_ids')} />
      </fieldset>
      {save.isError && (
        <p className="field-error" role="alert">
          {messageOf(save.error)}
        </p>
      )}
      {!readOnly && (
        <div className="row">
          <Button type="submit" variant="primary" busy={save.isPending}>
            {action ? 'Save action' : 'Create action'}
          </Button>
          {onDone && <Button onClick={onDone}>Cancel</Button>}
        </div>
      )}
    </form>
  )
}
