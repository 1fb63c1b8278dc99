import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useState, type DragEvent } from 'react'
import { Link } from 'wouter'
import { api, call, messageOf } from '../api/client'
import type { DocumentItem, UrlSource } from '../api/types'
import { uploadDocument } from '../api/upload'
import { Badge, Button, Empty, ErrorBox, Field, fieldError, Loading, lines, PageHeader, Progress, Select, TextArea, When } from '../ui/kit'
import { CrawlProgress, DocStatus, HealthCell, SCHEDULES, SourceStatus, scheduleWords, TYPE_NAMES, VectorsStatus } from '../ui/knowledge-parts'
import { useToast } from '../ui/toast'
import { ConnectHelpCentre, LastSync } from './knowledge-connect'

const PARALLEL_UPLOADS = 3
const ACCEPT = '.pdf,.md,.mdx,.docx,.doc,.txt,.json,.yaml,.yml,.html,.htm'

type Sources = { documents: DocumentItem[]; url_sources: UrlSource[] }

/** Uploaded files and website sources; polled while anything is still being indexed or crawled. */
export function useKnowledge() {
  return useQuery({
    queryKey: ['sources'],
    queryFn: () => call(api.GET('/documents/sources')),
    refetchInterval: (q) => {
      const d = q.state.data as Sources | undefined
      if (!d) return false
      const busy = d.documents.some((x) => x.status === 'processing') || d.url_sources.some((s) => s.status === 'queued' || s.status === 'indexing')
      // vectors still coming (or waiting for the provider): look again now and then, so the badge clears by itself
      return busy ? 1500 : d.documents.some((x) => x.status === 'ready' && x.embeddings.status !== 'ready') ? 5000 : false
    },
  })
}

interface UploadItem {
  key: number
  name: string
  state: 'queued' | 'uploading' | 'uploaded' | 'failed'
  fraction: number
  documentId?: string
  /** The document's status as the upload answered; the live list takes over once it has the document. */
  docStatus?: DocumentItem['status']
  error?: string
}

/** Drag-and-drop (or pick) many files; three upload at a time, each with its own progress and result. */
function Uploader({ documents }: { documents: DocumentItem[] }) {
  const [items, setItems] = useState<UploadItem[]>([])
  const [over, setOver] = useState(false)
  const files = useRef(new Map<number, File>())
  const started = useRef(new Set<number>())
  const nextKey = useRef(1)
  const input = useRef<HTMLInputElement>(null)
  const qc = useQueryClient()

  const add = (list: FileList | File[]) => {
    const added: UploadItem[] = []
    for (const f of Array.from(list)) {
      const key = nextKey.current++
      files.current.set(key, f)
      added.push({ key, name: f.name, state: 'queued', fraction: 0 })
    }
    if (added.length) setItems((cur) => [...cur, ...added])
  }

  const patch = (key: number, p: Partial<UploadItem>) => setItems((cur) => cur.map((it) => (it.key === key ? { ...it, ...p } : it)))

  // The queue: whenever an upload ends or files are added, start queued ones until three are running.
  useEffect(() => {
    const running = items.filter((i) => i.state === 'uploading').length
    const waiting = items.filter((i) => i.state === 'queued' && !started.current.has(i.key))
    for (const it of waiting.slice(0, Math.max(0, PARALLEL_UPLOADS - running))) {
      const file = files.current.get(it.key)
      if (!file) continue
      started.current.add(it.key)
      patch(it.key, { state: 'uploading' })
      uploadDocument(file, (fraction) => patch(it.key, { fraction }))
        .then((doc) => {
          patch(it.key, { state: 'uploaded', fraction: 1, documentId: doc.id, docStatus: doc.status })
          void qc.invalidateQueries({ queryKey: ['sources'] })
          void qc.invalidateQueries({ queryKey: ['documents'] })
        })
        .catch((err: unknown) => patch(it.key, { state: 'failed', error: messageOf(err) }))
        .finally(() => files.current.delete(it.key))
    }
  }, [items, qc])

  const onDrop = (e: DragEvent) => {
    e.preventDefault()
    setOver(false)
    if (e.dataTransfer.files.length) add(e.dataTransfer.files)
  }
  const active = items.some((i) => i.state === 'queued' || i.state === 'uploading')

  return (
    <section className="card" aria-labelledby="upload-h">
      <h2 id="upload-h">Upload files</h2>
      <div
        className={`dropzone${over ? ' over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault()
          e.dataTransfer.dropEffect = 'copy'
          setOver(true)
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <p>Drop files here, as many as you like, or</p>
        <Button variant="primary" onClick={() => input.current?.click()}>
          Choose files
        </Button>
        <input
          ref={input}
          type="file"
          multiple
          accept={ACCEPT}
          hidden
          aria-label="Files to upload"
          onChange={(e) => {
            if (e.target.files) add(e.target.files)
            e.target.value = ''
          }}
        />
        <p className="hint">PDF, Markdown, Word, text, JSON, YAML or OpenAPI files, up to 20 MB each.</p>
      </div>
      {items.length > 0 && (
        <>
          <ul className="upload-list" aria-label="Uploads" aria-live="polite">
            {items.map((it) => {
              const live = it.documentId ? documents.find((d) => d.id === it.documentId) : undefined
              const doc = live ?? (it.docStatus ? { status: it.docStatus, error_message: null } : undefined)
              return (
                <li key={it.key} className="upload-item">
                  <span className="upload-name">{it.name}</span>
                  <span className="upload-state">
                    {it.state === 'queued' && <span className="muted">Waiting…</span>}
                    {it.state === 'uploading' && (
                      <>
                        <Progress value={Math.round(it.fraction * 100)} max={100} label={`Uploading ${it.name}`} />
                        <span className="muted kc-nowrap" aria-hidden="true">{`Uploading ${Math.round(it.fraction * 100)}%`}</span>
                      </>
                    )}
                    {it.state === 'uploaded' &&
                      (doc?.status === 'ready' ? (
                        <Badge tone="ok">Ready</Badge>
                      ) : doc?.status === 'error' ? (
                        <span className="upload-error">{`Indexing failed: ${doc.error_message ?? 'unknown error'}`}</span>
                      ) : (
                        <Badge tone="info">Uploaded, indexing…</Badge>
                      ))}
                    {it.state === 'failed' && <span className="upload-error">{it.error}</span>}
                  </span>
                </li>
              )
            })}
          </ul>
          {!active && (
            <Button small variant="ghost" onClick={() => setItems([])}>
              Clear list
            </Button>
          )}
        </>
      )}
    </section>
  )
}

function DocumentsTable({ documents }: { documents: DocumentItem[] }) {
  const qc = useQueryClient()
  const toast = useToast()
  const del = useMutation({
    mutationFn: (id: string) => call(api.DELETE('/documents/{document_id}', { params: { path: { document_id: id } } })),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['sources'] })
      void qc.invalidateQueries({ queryKey: ['documents'] })
      toast('Document deleted')
    },
    onError: (err) => toast(messageOf(err), 'error'),
  })
  if (documents.length === 0)
    return (
      <Empty title="No documents yet">
        <p>Upload help articles, manuals or FAQs above. The bot answers only from what you add here.</p>
      </Empty>
    )
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Document</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col" className="num">
              Chunks
            </th>
            <th scope="col">Health</th>
            <th scope="col">Updated</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {documents.map((d) => (
            <tr key={d.id}>
              <td className="kc-cell-wrap">
                <Link href={`/knowledge/documents/${d.id}`}>{d.title || d.filename}</Link>
                {d.title && d.title !== d.filename && <div className="muted kc-small">{d.filename}</div>}
                {d.status === 'error' && d.error_message && <div className="upload-error kc-small">{d.error_message}</div>}
              </td>
              <td>{TYPE_NAMES[d.file_type]}</td>
              <td>
                <span className="row kc-nowrap">
                  <DocStatus status={d.status} />
                  {d.status === 'ready' && d.embeddings.status !== 'ready' && <VectorsStatus embeddings={d.embeddings} />}
                </span>
              </td>
              <td className="num">{d.chunk_count}</td>
              <td>
                <HealthCell health={d.health_status} />
              </td>
              <td>
                <When at={d.updated_at} />
              </td>
              <td>
                <Button
                  small
                  variant="danger"
                  busy={del.isPending && del.variables === d.id}
                  aria-label={`Delete ${d.title || d.filename}`}
                  onClick={() => confirm(`Delete "${d.title || d.filename}"? The bot stops answering from it.`) && del.mutate(d.id)}
                >
                  Delete
                </Button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function AddWebsite() {
  const [url, setUrl] = useState('')
  const [name, setName] = useState('')
  const [schedule, setSchedule] = useState<(typeof SCHEDULES)[number][0]>('weekly')
  const [exclusions, setExclusions] = useState('')
  const [maxPages, setMaxPages] = useState('')
  const qc = useQueryClient()
  const toast = useToast()
  const add = useMutation({
    mutationFn: () =>
      call(
        api.POST('/documents/sources/url', {
          body: {
            url: url.trim(),
            name: name.trim() || null,
            schedule,
            exclusions: lines(exclusions),
            max_pages: maxPages.trim() ? Number(maxPages) : null,
          },
        }),
      ),
    onSuccess: async (s) => {
      await qc.invalidateQueries({ queryKey: ['sources'] })
      setUrl('')
      setName('')
      setExclusions('')
      setMaxPages('')
      toast(`Reading ${s.name}…`)
    },
  })
  const fields = ['url', 'name', 'schedule', 'exclusions', 'max_pages']
  return (
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault()
        add.mutate()
      }}
      noValidate
    >
      <h3>Add a website</h3>
      <div className="grid-2">
        <Field
          label="Website address"
          type="url"
          required
          placeholder="https://help.example.com"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          error={fieldError(add.error, 'url')}
        />
        <Field label="Name (optional)" value={name} maxLength={200} onChange={(e) => setName(e.target.value)} error={fieldError(add.error, 'name')} />
        <Select label="Read it again" value={schedule} options={SCHEDULES} onChange={setSchedule} />
        <Field
          label="Most pages (optional)"
          type="number"
          min={1}
          max={5000}
          inputMode="numeric"
          value={maxPages}
          onChange={(e) => setMaxPages(e.target.value)}
          error={fieldError(add.error, 'max_pages')}
          hint="Default 200."
        />
      </div>
      <TextArea
        label="Leave out (optional)"
        hint="One pattern per line, e.g. /blog/* or /careers"
        rows={3}
        value={exclusions}
        onChange={(e) => setExclusions(e.target.value)}
        error={fieldError(add.error, 'exclusions')}
      />
      <ErrorBox error={add.error && !fieldError(add.error, ...fields) ? add.error : null} />
      <Button type="submit" variant="primary" busy={add.isPending} disabled={!url.trim()}>
        Add website
      </Button>
    </form>
  )
}

function SourcesTable({ sources }: { sources: UrlSource[] }) {
  if (sources.length === 0)
    return (
      <Empty title="No websites yet">
        <p>Add your help center or docs site and the bot reads it, and re-reads it on a schedule.</p>
      </Empty>
    )
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Website or help centre</th>
            <th scope="col">Status</th>
            <th scope="col">Progress</th>
            <th scope="col">Schedule</th>
            <th scope="col">Last read</th>
          </tr>
        </thead>
        <tbody>
          {sources.map((s) => (
            <tr key={s.id}>
              <td className="kc-cell-wrap">
                <Link href={`/knowledge/sources/${s.id}`}>{s.name}</Link>
                <div className="muted kc-small">{s.url}</div>
                {s.error_message && <div className="upload-error kc-small">{s.error_message}</div>}
                {s.warning_message && s.source_type === 'url' && <div className="warn-text kc-small">{s.warning_message}</div>}
                <LastSync s={s} />
              </td>
              <td>
                <SourceStatus status={s.status} />
              </td>
              <td>
                <CrawlProgress s={s} />
              </td>
              <td>{scheduleWords(s.schedule)}</td>
              <td>
                <When at={s.last_crawled_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

export default function Knowledge() {
  const q = useKnowledge()
  return (
    <>
      <PageHeader title="Knowledge" />
      <p className="muted">Everything the bot may answer from: uploaded files, websites it reads and help centres it syncs.</p>
      <Uploader documents={q.data?.documents ?? []} />
      <section aria-labelledby="docs-h">
        <h2 id="docs-h">Documents</h2>
        {q.isPending ? <Loading /> : q.isError ? <ErrorBox error={q.error} retry={() => q.refetch()} /> : <DocumentsTable documents={q.data.documents} />}
      </section>
      <section aria-labelledby="sites-h">
        <h2 id="sites-h">Websites and help centres</h2>
        <AddWebsite />
        <ConnectHelpCentre />
        {q.isPending ? <Loading /> : q.isError ? <ErrorBox error={q.error} retry={() => q.refetch()} /> : <SourcesTable sources={q.data.url_sources} />}
      </section>
    </>
  )
}
