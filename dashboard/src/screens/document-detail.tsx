import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link, useLocation } from 'wouter'
import { api, call } from '../api/client'
import { Badge, Button, ErrorBox, Loading, PageHeader, When } from '../ui/kit'
import { DocStatus, formatBytes, severityTone, TYPE_NAMES, VectorsStatus } from '../ui/knowledge-parts'
import { useToast } from '../ui/toast'

export default function DocumentDetail({ params }: { params: Record<string, string> }) {
  const id = params.id!
  const qc = useQueryClient()
  const toast = useToast()
  const [, navigate] = useLocation()
  const doc = useQuery({
    queryKey: ['document', id],
    queryFn: () => call(api.GET('/documents/{document_id}', { params: { path: { document_id: id } } })),
    refetchInterval: (q) => (q.state.data?.status === 'processing' ? 1500 : q.state.data && q.state.data.embeddings.status !== 'ready' ? 5000 : false),
  })
  const check = useMutation({
    mutationFn: () => call(api.POST('/documents/{document_id}/health/run', { params: { path: { document_id: id } } })),
    onSuccess: (health) => {
      qc.setQueryData(['document', id], (d: typeof doc.data) => (d ? { ...d, health_status: health } : d))
      void qc.invalidateQueries({ queryKey: ['sources'] })
      toast('Health check done')
    },
  })
  const del = useMutation({
    mutationFn: () => call(api.DELETE('/documents/{document_id}', { params: { path: { document_id: id } } })),
    onSuccess: async () => {
      qc.removeQueries({ queryKey: ['document', id] })
      await qc.invalidateQueries({ queryKey: ['sources'] })
      void qc.invalidateQueries({ queryKey: ['documents'] })
      toast('Document deleted')
      navigate('/knowledge')
    },
  })
  const back = (
    <p>
      <Link href="/knowledge">← Knowledge</Link>
    </p>
  )
  if (doc.isPending) return <Loading />
  if (doc.isError)
    return (
      <>
        {back}
        <PageHeader title="Document" />
        <ErrorBox error={doc.error} retry={() => doc.refetch()} />
      </>
    )
  const d = doc.data
  const name = d.title || d.filename
  const h = d.health_status
  return (
    <>
      {d.source_id ? (
        <p>
          <Link href={`/knowledge/sources/${d.source_id}`}>← Website</Link>
        </p>
      ) : (
        back
      )}
      <PageHeader title={name}>
        <Button variant="danger" busy={del.isPending} onClick={() => confirm(`Delete "${name}"? The bot stops answering from it.`) && del.mutate()}>
          Delete document
        </Button>
      </PageHeader>
      <ErrorBox error={del.error} />
      <div className="grid-2">
        <section className="card" aria-labelledby="facts-h">
          <h2 id="facts-h">Facts</h2>
          <dl className="facts">
            <dt>File</dt>
            <dd>{d.filename}</dd>
            <dt>Type</dt>
            <dd>{TYPE_NAMES[d.file_type]}</dd>
            <dt>Status</dt>
            <dd>
              <DocStatus status={d.status} />
            </dd>
            {d.error_message && (
              <>
                <dt>Error</dt>
                <dd className="upload-error">{d.error_message}</dd>
              </>
            )}
            {d.source_url && (
              <>
                <dt>Page</dt>
                <dd>
                  <a href={d.source_url} target="_blank" rel="noopener noreferrer">
                    {d.source_url}
                  </a>
                </dd>
              </>
            )}
            <dt>Size</dt>
            <dd>{formatBytes(d.size_bytes)}</dd>
            <dt>Chunks</dt>
            <dd>{d.chunk_count}</dd>
            {d.status === 'ready' && d.chunk_count > 0 && (
              <>
                <dt>Vectors</dt>
                <dd>
                  <VectorsStatus embeddings={d.embeddings} />{' '}
                  <span className="muted kc-small">{`${d.embeddings.done} of ${d.embeddings.total} chunks, ${d.embeddings.model}`}</span>
                  {d.embeddings.message && <div className="upload-error kc-small">{d.embeddings.message}</div>}
                </dd>
              </>
            )}
            <dt>Text length</dt>
            <dd>{`${d.parsed_text_length.toLocaleString()} characters`}</dd>
            <dt>Added</dt>
            <dd>
              <When at={d.created_at} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <When at={d.updated_at} />
            </dd>
          </dl>
        </section>
        <section className="card" aria-labelledby="health-h">
          <div className="row kc-spread">
            <h2 id="health-h">Health</h2>
            <Button small busy={check.isPending} disabled={d.status !== 'ready'} onClick={() => check.mutate()}>
              Run check
            </Button>
          </div>
          <ErrorBox error={check.error} />
          {!h ? (
            <p className="muted">Not checked yet. The check looks for thin, duplicated or outdated content.</p>
          ) : (
            <>
              <p>
                {h.score === null ? <span className="muted">No score</span> : <span className="kc-score">{`Score ${h.score} of 100`}</span>}{' '}
                <span className="muted kc-small">
                  checked <When at={h.checked_at} />
                </span>
              </p>
              {h.error && <p className="upload-error">{h.error}</p>}
              {h.warnings.length === 0 ? (
                !h.error && <p className="muted">No warnings.</p>
              ) : (
                <ul className="kc-warnings">
                  {h.warnings.map((w, i) => (
                    <li key={i}>
                      <Badge tone={severityTone(w.severity)}>{w.severity}</Badge> <span>{w.message}</span>
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </section>
      </div>
      <section aria-labelledby="text-h">
        <h2 id="text-h">Text the bot reads</h2>
        {d.status === 'processing' ? (
          <Loading label="Still reading the file…" />
        ) : d.parsed_text ? (
          <pre className="parsed-text" tabIndex={0} aria-labelledby="text-h">
            {d.parsed_text}
          </pre>
        ) : (
          <p className="muted">No text was found in this document.</p>
        )}
      </section>
    </>
  )
}
