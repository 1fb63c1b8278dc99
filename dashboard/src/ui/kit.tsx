import { useId, useState, type ButtonHTMLAttributes, type InputHTMLAttributes, type ReactNode, type Ref, type TextareaHTMLAttributes } from 'react'
import { ApiError, messageOf } from '../api/client'

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {label}
    </p>
  )
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children}
    </div>
  )
}

/** A failed load or action, in the service's words, with a retry when one makes sense. */
export function ErrorBox({ error, retry }: { error: unknown; retry?: () => void }) {
  if (!error) return null
  return (
    <div className="error-box" role="alert">
      <span>{messageOf(error)}</span>
      {retry && (
        <button type="button" className="btn btn-small" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  )
}

/** The 422 message for one field of a failed request, if the service named it. */
export function fieldError(error: unknown, ...names: string[]): string | undefined {
  if (!(error instanceof ApiError)) return undefined
  for (const n of names) {
    const hit = Object.entries(error.fields).find(([k]) => k === n || k.startsWith(`${n}.`))
    if (hit) return hit[1]
  }
  return undefined
}

/** Label, hint and the service's error message around one control, wired for screen readers. */
function Labelled({
  label,
  hint,
  error,
  control,
}: {
  label: string
  hint?: ReactNode
  error?: string
  control: (aria: { id: string; 'aria-invalid'?: true; 'aria-describedby'?: string }) => ReactNode
}) {
  const id = useId()
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-err` : ''].filter(Boolean).join(' ') || undefined
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {control({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy })}
      {hint && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-err`} className="field-error">
          {error}
        </p>
      )}
    </div>
  )
}

interface FieldProps extends InputHTMLAttributes<HTMLInputElement> {
  ref?: Ref<HTMLInputElement>
  label: string
  hint?: ReactNode
  error?: string
}
export function Field({ label, hint, error, ...input }: FieldProps) {
  return <Labelled label={label} hint={hint} error={error} control={(aria) => <input {...aria} {...input} />} />
}

interface AreaProps extends TextareaHTMLAttributes<HTMLTextAreaElement> {
  ref?: Ref<HTMLTextAreaElement>
  label: string
  hint?: ReactNode
  error?: string
}
export function TextArea({ label, hint, error, ...area }: AreaProps) {
  return <Labelled label={label} hint={hint} error={error} control={(aria) => <textarea {...aria} {...area} />} />
}

export function Check({ label, checked, onChange, hint }: { label: string; checked: boolean; onChange: (v: boolean) => void; hint?: string }) {
  const id = useId()
  return (
    <div className="check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
      {hint && <p className="hint">{hint}</p>}
    </div>
  )
}

export function Select<T extends string>({
  label,
  value,
  options,
  onChange,
}: {
  label: string
  value: T
  options: readonly (readonly [T, string])[]
  onChange: (v: T) => void
}) {
  const id = useId()
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as T)}>
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  )
}

interface BtnProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  busy?: boolean
  variant?: 'primary' | 'secondary' | 'danger' | 'ghost'
  small?: boolean
}
export function Button({ busy, variant = 'secondary', small, children, disabled, className, ...rest }: BtnProps) {
  return (
    <button
      type="button"
      className={`btn btn-${variant}${small ? ' btn-small' : ''}${className ? ` ${className}` : ''}`}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...rest}
    >
      {busy && <span className="spinner" aria-hidden="true" />}
      {children}
    </button>
  )
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false)
  return (
    <Button
      small
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text)
        } catch {
          // Clipboard refused (insecure origin): select-and-copy by hand still works from the code block.
        }
        setDone(true)
        setTimeout(() => setDone(false), 2000)
      }}
    >
      {done ? 'Copied' : label}
    </Button>
  )
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="page-header">
      <h1>{title}</h1>
      {children && <div className="page-actions">{children}</div>}
    </div>
  )
}

export function Badge({ tone = 'neutral', children }: { tone?: 'neutral' | 'ok' | 'warn' | 'bad' | 'info'; children: ReactNode }) {
  return <span className={`badge badge-${tone}`}>{children}</span>
}

const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })
export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span className="muted">never</span>
  const d = new Date(at)
  const s = Math.round((d.getTime() - Date.now()) / 1000)
  const abs = Math.abs(s)
  const text =
    abs < 60
      ? rtf.format(s, 'second')
      : abs < 3600
        ? rtf.format(Math.round(s / 60), 'minute')
        : abs < 86400
          ? rtf.format(Math.round(s / 3600), 'hour')
          : rtf.format(Math.round(s / 86400), 'day')
  return (
    <time dateTime={at} title={d.toLocaleString()}>
      {text}
    </time>
  )
}

export function Progress({ value, max, label }: { value: number; max: number; label: string }) {
  const pct = max > 0 ? Math.min(100, Math.round((value / max) * 100)) : 0
  return (
    <div className="progress" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={max || 100} aria-valuenow={max > 0 ? value : 0}>
      <div className="progress-bar" style={{ width: `${pct}%` }} />
    </div>
  )
}

/** A line-per-item text box's value as a list, blank lines dropped. */
export const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean)

/** Previous / next paging for lists the service pages with limit and offset. */
export function Pager({
  offset,
  limit,
  total,
  onChange,
  label,
}: {
  offset: number
  limit: number
  total: number
  onChange: (offset: number) => void
  label: string
}) {
  if (total <= limit && offset === 0) return null
  const from = total === 0 ? 0 : offset + 1
  const to = Math.min(offset + limit, total)
  return (
    <nav className="pager" aria-label={label}>
      <Button small disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - limit))}>
        Previous
      </Button>
      <span className="muted">{`${from}–${to} of ${total}`}</span>
      <Button small disabled={offset + limit >= total} onClick={() => onChange(offset + limit)}>
        Next
      </Button>
    </nav>
  )
}

/** A screen or section the member's role may not use: said plainly, with a way back, never a broken page. */
export function Forbidden({ text, children }: { text: string; children?: ReactNode }) {
  return (
    <div className="empty" role="note">
      <p className="empty-title">{text}</p>
      {children ?? <p>Ask an owner or admin of your workspace if you need it.</p>}
    </div>
  )
}

/** Moves focus to the element with this id once it is on the page (after the re-render an action causes). */
/**
 * Moves focus to the element with this id once it is on the page: a fetched page of rows can render a few frames
 * after the fetch resolves (a busy machine), so it looks again each frame for about two seconds instead of once.
 */
export function focusSoon(id: string, frames = 120) {
  requestAnimationFrame(() => {
    const el = document.getElementById(id)
    if (el) el.focus()
    else if (frames > 0) focusSoon(id, frames - 1)
  })
}

/** Figures as labelled tiles (Insights): each a label and its value. */
export function Tiles({ tiles }: { tiles: readonly (readonly [string, string])[] }) {
  return (
    <dl className="tiles">
      {tiles.map(([k, v]) => (
        <div key={k} className="tile">
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  )
}
