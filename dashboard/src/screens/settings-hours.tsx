import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { api, call } from '../api/client'
import { Button, ErrorBox, Field, fieldError, Loading } from '../ui/kit'
import { useToast } from '../ui/toast'

interface Row {
  day: number
  start: string
  end: string
}
interface Hours {
  timezone: string
  weekly: Row[]
  holidays: string[]
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

/** The browser's list of IANA zones (every modern browser has it); the service checks the name anyway. */
const ZONES: string[] = (() => {
  try {
    return (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? []
  } catch {
    return []
  }
})()

/**
 * When the team answers: the time zone, opening hours per weekday and holidays. The widget promises a
 * person only inside them (with someone online), and says when the team is back outside them.
 */
export function OfficeHours({ canChange }: { canChange: boolean }) {
  const q = useQuery({ queryKey: ['office-hours'], queryFn: () => call(api.GET('/tenants/me/office-hours')) })
  if (q.isPending) return <Loading />
  if (q.isError) return <ErrorBox error={q.error} retry={() => q.refetch()} />
  return <HoursForm key={JSON.stringify(q.data)} initial={q.data} canChange={canChange} />
}

function HoursForm({ initial, canChange }: { initial: Hours; canChange: boolean }) {
  const [timezone, setTimezone] = useState(initial.timezone)
  const [weekly, setWeekly] = useState<Row[]>(initial.weekly)
  const [holidays, setHolidays] = useState<string[]>(initial.holidays)
  const [holiday, setHoliday] = useState('')
  const qc = useQueryClient()
  const toast = useToast()
  const listId = useId()
  const save = useMutation({
    mutationFn: () => call(api.PUT('/tenants/me/office-hours', { body: { timezone: timezone.trim(), weekly, holidays } })),
    onSuccess: (h) => {
      qc.setQueryData(['office-hours'], h)
      toast('Office hours saved')
    },
  })
  const tzErr = fieldError(save.error, 'timezone')
  const rowsErr = fieldError(save.error, 'weekly')
  const holErr = fieldError(save.error, 'holidays')
  const setRow = (i: number, patch: Partial<Row>) => setWeekly((rows) => rows.map((r, j) => (j === i ? { ...r, ...patch } : r)))
  const addHoliday = () => {
    if (/^\d{4}-\d{2}-\d{2}$/.test(holiday) && !holidays.includes(holiday)) setHolidays((h) => [...h, holiday].sort())
    setHoliday('')
  }
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
      noValidate
    >
      <fieldset disabled={!canChange} className="plain">
        <Field
          label="Time zone"
          list={listId}
          value={timezone}
          maxLength={64}
          onChange={(e) => setTimezone(e.target.value)}
          error={tzErr}
          hint="The team's time zone, e.g. Europe/Berlin. Visitors see the times in their own."
        />
        <datalist id={listId}>
          {ZONES.map((z) => (
            <option key={z} value={z} />
          ))}
        </datalist>
        <h3 id="hours-weekly">Weekly hours</h3>
        {weekly.length === 0 ? (
          <p className="muted">No weekly hours: the team counts as open every day (but the holidays).</p>
        ) : (
          <div className="table-wrap">
            <table className="hours-table" aria-labelledby="hours-weekly">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">From</th>
                  <th scope="col">To</th>
                  <th scope="col">
                    <span className="sr-only">Remove</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {weekly.map((r, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: rows have no id; their order is the identity while editing
                  <tr key={i}>
                    <td>
                      <select aria-label={`Day of row ${i + 1}`} value={r.day} onChange={(e) => setRow(i, { day: Number(e.target.value) })}>
                        {DAYS.map((d, n) => (
                          <option key={d} value={n}>
                            {d}
                          </option>
                        ))}
                      </select>
                    </td>
                    <td>
                      <input type="time" aria-label={`${DAYS[r.day]} from`} value={r.start} required onChange={(e) => setRow(i, { start: e.target.value })} />
                    </td>
                    <td>
                      <input
                        type="time"
                        aria-label={`${DAYS[r.day]} to`}
                        value={r.end === '24:00' ? '23:59' : r.end}
                        required
                        onChange={(e) => setRow(i, { end: e.target.value })}
                      />
                    </td>
                    <td>
                      <Button small onClick={() => setWeekly((rows) => rows.filter((_, j) => j !== i))}>
                        Remove{' '}
                        <span className="sr-only">
                          {DAYS[r.day]} {r.start}–{r.end}
                        </span>
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {rowsErr && <p className="field-error">{rowsErr}</p>}
        <div className="row">
          <Button small onClick={() => setWeekly((rows) => [...rows, { day: 1, start: '09:00', end: '17:00' }])}>
            Add hours
          </Button>
          <Button small onClick={() => setWeekly([1, 2, 3, 4, 5].map((day) => ({ day, start: '09:00', end: '17:00' })))}>
            Monday to Friday, 9 to 5
          </Button>
        </div>
        <h3>Holidays</h3>
        {holidays.length === 0 ? (
          <p className="muted">No holidays.</p>
        ) : (
          <ul className="chips" aria-label="Holidays">
            {holidays.map((d) => (
              <li key={d}>
                {d}{' '}
                <Button small onClick={() => setHolidays((h) => h.filter((x) => x !== d))}>
                  Remove <span className="sr-only">{d}</span>
                </Button>
              </li>
            ))}
          </ul>
        )}
        <div className="row">
          <Field label="Holiday" type="date" value={holiday} onChange={(e) => setHoliday(e.target.value)} error={holErr} />
          <Button small onClick={addHoliday} disabled={!holiday}>
            Add holiday
          </Button>
        </div>
      </fieldset>
      <ErrorBox error={save.error && !tzErr && !rowsErr && !holErr ? save.error : null} />
      {canChange && (
        <Button type="submit" variant="primary" busy={save.isPending}>
          Save office hours
        </Button>
      )}
    </form>
  )
}
