import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useLocation } from 'wouter'
import { api, call, messageOf } from '../api/client'
import type { Res } from '../api/types'
import { Badge, Button, Empty, ErrorBox, Field, fieldError, Loading, lines, PageHeader, Select, TextArea, When } from '../ui/kit'
import { CrawlProgress, DocStatus, SCHEDULES, SourceStatus } from '../ui/knowledge-parts'
import { useToast } from '../ui/toast'

type Detail = Res<'/documents/sources/{source_id}', 'get'>
type Run = Detail['recent_runs'][number]

function Settings({ s }: { s: Detail }) {
  const [name, setName] = useState(s.name)
  const [schedule, setSchedule] = useState(s.schedule)
  const [exclusions, setExclusions] = useState(s.exclusion_patterns.join('\n'))
  const [maxPages, setMaxPages] = useState(String(s.max_pages))
  const qc = useQueryClient()
  const toast = useToast()
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PATCH('/documents/sources/{source_id}', {
          params: { path: { source_id: s.id } },
          body: { name: name.trim(), schedule, exclusions: lines(exclusions), max_pages: maxPages.trim() ? Number(maxPages) : null },
        }),
      ),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['source', s.id] })
      void qc.invalidateQueries({ queryKey: ['sources'] })
      toast('Website settings saved')
    },
  })
  return (
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
      noValidate
    >
      <h2>Settings</h2>
      <Field label="Name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} error={fieldError(save.error, 'name')} />
      <Select label="Read it again" value={schedule} options={SCHEDULES} onChange={setSchedule} />
      <Field
        label="Most pages"
        type="number"
        min={1}
        max={5000}
        inputMode="numeric"
        value={maxPages}
        onChange={(e) => setMaxPages(e.target.value)}
        error={fieldError(save.error, 'max_pages')}
      />
      <TextArea
        label="Leave out"
        hint="One pattern per line, e.g. /blog/* or /careers"
        rows={4}
        value={exclusions}
        onChange={(e) => setExclusions(e.target.value)}
        error={fieldError(save.error, 'exclusions', 'exclusion_patterns')}
      />
      <ErrorBox error={save.error && !fieldError(save.error, 'name', 'max_pages', 'exclusions', 'exclusion_patterns', 'schedule') ? save.error : null} />
      <Button type="submit" variant="primary" busy={save.isPending}>
        Save settings
      </Button>
    </form>
  )
}

function RunRow({ r }: { r: Run }) {
  return (
    <tr>
      <td>
        <When at={r.created_at} />
      </td>
      <td>{r.trigger}</td>
      <td>
        <Badge tone={r.status === 'running' ? 'info' : r.status === 'failed' || r.status === 'error' ? 'bad' : r.failed_urls.length ? 'warn' : 'ok'}>
          {r.status}
        </Badge>
        {r.error_message && <div className="upload-error kc-small">{r.error_message}</div>}
      </td>
      <td className="num">{r.pages_found}</td>
      <td className="num">{r.pages_indexed}</td>
      <td className="num">{r.pages_unchanged}</td>
      <td className="num">{r.pages_removed}</td>
      <td className="num">{r.duration_seconds === null ? '–' : `${r.duration_seconds.toFixed(1)} s`}</td>
      <td className="kc-cell-wrap">
        {r.failed_urls.length === 0 ? (
          <span className="muted">none</span>
        ) : (
          <details>
            <summary>{`${r.failed_urls.length} failed`}</summary>
            <ul className="failed-urls">
              {r.failed_urls.map((f, i) => (
                <li key={i}>
                  <span className="kc-url">{f.url}</span> <span className="muted">{`— ${f.reason}`}</span>
                </li>
              ))}
            </ul>
          </details>
        )}
      </td>
    </tr>
  )
}

export default function SourceDetail({ params }: { params: Record<string, string> }) {
  const id = params.id!
  const qc = useQueryClient()
  const toast = useToast()
  const [, navigate] = useLocation()
  const src = useQuery({
    queryKey: ['source', id],
    queryFn: () => call(api.GET('/documents/sources/{source_id}', { params: { path: { source_id: id } } })),
    refetchInterval: (q) => {
      const d = q.state.data
      if (!d) return false
      const busy = d.status === 'queued' || d.status === 'indexing' || d.recent_runs[0]?.status === 'running' || d.pages.some((p) => p.status === 'processing')
      return busy ? 1500 : false
    },
  })
  const after = async (msg: string) => {
    await qc.invalidateQueries({ queryKey: ['source', id] })
    void qc.invalidateQueries({ queryKey: ['sources'] })
    toast(msg)
  }
  const refresh = useMutation({
    mutationFn: () => call(api.POST('/documents/sources/{source_id}/refresh', { params: { path: { source_id: id } } })),
    onSuccess: () => after('Reading the website again…'),
  })
  const pause = useMutation({
    mutationFn: (paused: boolean) => call(api.PATCH('/documents/sources/{source_id}', { params: { path: { source_id: id } }, body: { paused } })),
    onSuccess: (s) => after(s.status === 'paused' ? 'Website paused' : 'Website resumed'),
  })
  const removePage = useMutation({
    mutationFn: (documentId: string) =>
      call(api.DELETE('/documents/sources/{source_id}/pages/{document_id}', { params: { path: { source_id: id, document_id: documentId } } })),
    onSuccess: () => after('Page removed and left out from now on'),
    onError: (err) => toast(messageOf(err), 'error'),
  })
  const del = useMutation({
    mutationFn: () => call(api.DELETE('/documents/sources/{source_id}', { params: { path: { source_id: id } } })),
    onSuccess: async () => {
      qc.removeQueries({ queryKey: ['source', id] })
      await qc.invalidateQueries({ queryKey: ['sources'] })
      toast('Website deleted')
      navigate('/knowledge')
    },
  })
  const back = (
    <p>
      <Link href="/knowledge">← Knowledge</Link>
    </p>
  )
  if (src.isPending) return <Loading />
  if (src.isError)
    return (
      <>
        {back}
        <PageHeader title="Website" />
        <ErrorBox error={src.error} retry={() => src.refetch()} />
      </>
    )
  const s = src.data
  const paused = s.status === 'paused'
  const busy = s.status === 'queued' || s.status === 'indexing'
  return (
    <>
      {back}
      <PageHeader title={s.name}>
        <Button variant="primary" busy={refresh.isPending} disabled={paused || busy} onClick={() => refresh.mutate()}>
          Refresh now
        </Button>
        <Button busy={pause.isPending} onClick={() => pause.mutate(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </Button>
        <Button
          variant="danger"
          busy={del.isPending}
          onClick={() => confirm(`Delete the website "${s.name}" and all its pages? The bot stops answering from them.`) && del.mutate()}
        >
          Delete website
        </Button>
      </PageHeader>
      <ErrorBox error={refresh.error ?? pause.error ?? del.error} />
      <div className="grid-2">
        <section className="card" aria-labelledby="status-h">
          <h2 id="status-h">Status</h2>
          <dl className="facts">
            <dt>Address</dt>
            <dd>
              <a href={s.url} target="_blank" rel="noopener noreferrer">
                {s.url}
              </a>
            </dd>
            <dt>Status</dt>
            <dd>
              <SourceStatus status={s.status} />
            </dd>
            <dt>Progress</dt>
            <dd>
              <CrawlProgress s={s} />
            </dd>
            <dt>Chunks</dt>
            <dd>{s.chunks_created}</dd>
            <dt>Last read</dt>
            <dd>
              <When at={s.last_crawled_at} />
            </dd>
            <dt>Next read</dt>
            <dd>{s.schedule === 'manual' || paused ? <span className="muted">only when refreshed</span> : <When at={s.next_crawl_at} />}</dd>
          </dl>
          {s.error_message && <p className="upload-error">{s.error_message}</p>}
          {s.warning_message && <p className="warn-text">{s.warning_message}</p>}
        </section>
        {/* Re-seeded only when the saved settings change, not on every poll while crawling. */}
        <Settings key={[s.name, s.schedule, s.max_pages, ...s.exclusion_patterns].join('\n')} s={s} />
      </div>

      <section aria-labelledby="runs-h">
        <h2 id="runs-h">Recent reads</h2>
        {s.recent_runs.length === 0 ? (
          <Empty title="Not read yet" />
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Why</th>
                  <th scope="col">Result</th>
                  <th scope="col" className="num">
                    Found
                  </th>
                  <th scope="col" className="num">
                    Indexed
                  </th>
                  <th scope="col" className="num">
                    Unchanged
                  </th>
                  <th scope="col" className="num">
                    Removed
                  </th>
                  <th scope="col" className="num">
                    Took
                  </th>
                  <th scope="col">Failed pages</th>
                </tr>
              </thead>
              <tbody>
                {s.recent_runs.map((r) => (
                  <RunRow key={r.id} r={r} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="pages-h">
        <h2 id="pages-h">{`Pages (${s.pages.length})`}</h2>
        {s.pages.length === 0 ? (
          <Empty title={busy ? 'Reading the website…' : 'No pages indexed'}>{!busy && <p>Check the address and the exclusions, then refresh.</p>}</Empty>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Page</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="num">
                    Chunks
                  </th>
                  <th scope="col">Updated</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {s.pages.map((p) => (
                  <tr key={p.id}>
                    <td className="kc-cell-wrap">
                      <Link href={`/knowledge/documents/${p.id}`}>{p.title || p.url}</Link>
                      <div className="kc-small">
                        <a href={p.url} target="_blank" rel="noopener noreferrer" className="muted kc-url">
                          {p.url}
                        </a>
                      </div>
                    </td>
                    <td>
                      <DocStatus status={p.status} />
                    </td>
                    <td className="num">{p.chunk_count}</td>
                    <td>
                      <When at={p.updated_at} />
                    </td>
                    <td>
                      <Button
                        small
                        variant="danger"
                        busy={removePage.isPending && removePage.variables === p.id}
                        aria-label={`Remove page ${p.title || p.url}`}
                        onClick={() => confirm(`Remove "${p.title || p.url}"? It is also left out of future reads.`) && removePage.mutate(p.id)}
                      >
                        Remove
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  )
}
