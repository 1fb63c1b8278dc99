import { useEffect, useId, useRef, type ReactNode } from 'react'
import uPlot from 'uplot'
import { Button } from './kit'

/** One line of a chart: its label, colour and a value per day (null: nothing that day). */
export interface Line {
  label: string
  color: string
  values: (number | null)[]
}

/** A table as text rows, and as the CSV file of exactly those rows (formula-like cells neutralised). */
export function toCsv(head: string[], rows: string[][]): string {
  const cell = (v: string) => {
    const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v
    return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
  }
  return `${[head, ...rows].map((r) => r.map(cell).join(',')).join('\r\n')}\r\n`
}

export function downloadCsv(fileName: string, head: string[], rows: string[][]): void {
  const url = URL.createObjectURL(new Blob([toCsv(head, rows)], { type: 'text/csv;charset=utf-8' }))
  const a = document.createElement('a')
  a.href = url
  a.download = fileName
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}

/** A data table with a CSV download of exactly its cells (`text`, the cells as shown). */
export function TableWithCsv({
  caption,
  head,
  rows,
  text,
  fileName,
}: {
  caption: string
  head: string[]
  rows: ReactNode[][]
  text: string[][]
  fileName: string
}) {
  return (
    <>
      <div className="table-wrap" role="region" aria-label={caption} tabIndex={0}>
        <table>
          <caption className="sr-only">{caption}</caption>
          <thead>
            <tr>
              {head.map((h) => (
                <th key={h} scope="col">
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={i}>
                {r.map((c, j) =>
                  j === 0 ? (
                    <th key={head[j]} scope="row">
                      {c}
                    </th>
                  ) : (
                    <td key={head[j]}>{c}</td>
                  ),
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Button small onClick={() => downloadCsv(fileName, head, text)}>
        Download CSV<span className="sr-only"> of {caption}</span>
      </Button>
    </>
  )
}

const dayTs = (d: string) => Date.parse(`${d}T00:00:00Z`) / 1000

/**
 * A daily line chart (uPlot, drawn on a canvas, so hidden from assistive technology) with its legend, and
 * the same numbers as a table under "Data table" with a CSV download of exactly that table.
 */
export function DailyChart({
  title,
  dates,
  lines,
  format,
  fileName,
  yRange,
}: {
  title: string
  dates: string[]
  lines: Line[]
  format: (v: number) => string
  fileName: string
  yRange?: [number, number]
}) {
  const id = useId()
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = box.current
    if (!el) return
    const data: uPlot.AlignedData = [dates.map(dayTs), ...lines.map((l) => l.values)]
    const opts: uPlot.Options = {
      width: Math.max(240, el.clientWidth),
      height: 220,
      legend: { show: false },
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true }, ...(yRange ? { y: { range: yRange } } : {}) },
      axes: [{}, { values: (_u, ticks) => ticks.map((t) => format(t)), size: 56 }],
      series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.color, width: 2, points: { show: dates.length < 40 } }))],
    }
    const chart = new uPlot(opts, data, el)
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(240, el.clientWidth), height: 220 }))
    resize.observe(el)
    return () => {
      resize.disconnect()
      chart.destroy()
    }
  }, [dates, lines, format, yRange])
  const head = ['Date', ...lines.map((l) => l.label)]
  const empty = lines.every((l) => l.values.every((v) => v === null || v === undefined))
  const text = dates.map((d, i) => [d, ...lines.map((l) => (l.values[i] === null || l.values[i] === undefined ? '' : format(l.values[i]!)))])
  return (
    <section className="card chart-card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <ul className="chart-legend">
        {lines.map((l) => (
          <li key={l.label}>
            <span className="swatch" style={{ background: l.color }} aria-hidden="true" />
            {l.label}
          </li>
        ))}
      </ul>
      {empty && <p className="hint">Nothing to show for these days yet.</p>}
      <div className="chart" ref={box} aria-hidden="true" data-testid="chart" />
      <details>
        <summary>Data table</summary>
        <TableWithCsv caption={`${title} by day`} head={head} rows={text} text={text} fileName={fileName} />
      </details>
    </section>
  )
}
