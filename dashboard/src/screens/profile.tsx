import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import type { Body, Res } from '../api/types'
import { Badge, Button, Check, ErrorBox, Field, fieldError, Loading, lines, PageHeader, TextArea, When } from '../ui/kit'
import type { Tone } from '../ui/ops'
import { useToast } from '../ui/toast'

type Profile = Res<'/knowledge/profile', 'get'>
type Patch = NonNullable<Body<'/knowledge/profile', 'patch'>>
type FieldName = Profile['operator_fields'][number]

const EXTRACTION: Record<Profile['extraction_status'], [Tone, string]> = {
  pending: ['info', 'Waiting for documents to read'],
  done: ['ok', 'Read from your documents'],
  failed: ['bad', 'Reading failed; fill it in by hand'],
}
const FIELD_WORDS: Record<FieldName, string> = {
  product_name: 'Product name',
  topics: 'Topics',
  glossary: 'Glossary',
  support_email: 'Support e-mail',
  support_urls: 'Support pages',
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i])

function Origin({ field, profile, onReset, busy }: { field: FieldName; profile: Profile; onReset: (f: FieldName) => void; busy: boolean }) {
  if (!profile.operator_fields.includes(field)) return <span className="muted origin">From your documents</span>
  return (
    <span className="row origin">
      <Badge tone="info">Set by you</Badge>
      <Button small busy={busy} onClick={() => onReset(field)} aria-label={`Reset to extracted: ${FIELD_WORDS[field]}`}>
        Reset to extracted
      </Button>
    </span>
  )
}

function ProfileForm({ profile }: { profile: Profile }) {
  const [productName, setProductName] = useState(profile.product_name ?? '')
  const [topics, setTopics] = useState(profile.topics.join('\n'))
  const [glossary, setGlossary] = useState(profile.glossary.map((g) => ({ ...g })))
  const [supportEmail, setSupportEmail] = useState(profile.support_email ?? '')
  const [urls, setUrls] = useState(profile.support_urls.join('\n'))
  const [autoApprove, setAutoApprove] = useState(profile.faq_auto_approve)
  const qc = useQueryClient()
  const toast = useToast()
  const patch = useMutation({
    mutationFn: (body: Patch) => call(api.PATCH('/knowledge/profile', { body })),
    onSuccess: (p, body) => {
      qc.setQueryData(['profile'], p)
      toast(body.reset_fields ? 'Reset to what was read from your documents' : 'Profile saved')
    },
  })
  /** Only what changed is sent: a field sent counts as set by the operator. */
  const changes = (): Patch => {
    const body: Patch = {}
    if (productName.trim() !== (profile.product_name ?? '')) body.product_name = productName.trim() || null
    if (!sameList(lines(topics), profile.topics)) body.topics = lines(topics)
    const g = glossary.map((x) => ({ term: x.term.trim(), definition: x.definition.trim() })).filter((x) => x.term || x.definition)
    if (JSON.stringify(g) !== JSON.stringify(profile.glossary)) body.glossary = g
    if (supportEmail.trim() !== (profile.support_email ?? '')) body.support_email = supportEmail.trim()
    if (!sameList(lines(urls), profile.support_urls)) body.support_urls = lines(urls)
    if (autoApprove !== profile.faq_auto_approve) body.faq_auto_approve = autoApprove
    return body
  }
  const err = (f: string) => (patch.variables?.reset_fields ? undefined : fieldError(patch.error, f))
  const known = ['product_name', 'topics', 'glossary', 'support_email', 'support_urls', 'faq_auto_approve']
  const reset = (f: FieldName) => patch.mutate({ reset_fields: [f] })
  const resetting = (f: FieldName) => patch.isPending && !!patch.variables?.reset_fields?.includes(f)
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        const body = changes()
        if (Object.keys(body).length === 0) toast('Nothing changed')
        else patch.mutate(body)
      }}
      noValidate
    >
      <div className="card">
        <div className="profile-field">
          <Field label="Product name" value={productName} maxLength={200} onChange={(e) => setProductName(e.target.value)} error={err('product_name')} />
          <Origin field="product_name" profile={profile} onReset={reset} busy={resetting('product_name')} />
        </div>
        <div className="profile-field">
          <TextArea label="Topics" hint="One per line." rows={4} value={topics} onChange={(e) => setTopics(e.target.value)} error={err('topics')} />
          <Origin field="topics" profile={profile} onReset={reset} busy={resetting('topics')} />
        </div>
        <fieldset className="profile-field">
          <legend>Glossary</legend>
          <p className="hint">Your product's own words, so the bot understands visitors who use them.</p>
          {glossary.length === 0 && <p className="muted">No terms yet.</p>}
          {glossary.map((g, i) => (
            <div key={i} className="glossary-row">
              <Field
                label={`Term ${i + 1}`}
                value={g.term}
                onChange={(e) => setGlossary((rows) => rows.map((r, j) => (j === i ? { ...r, term: e.target.value } : r)))}
                error={err(`glossary.${i}.term`)}
              />
              <Field
                label={`Definition ${i + 1}`}
                value={g.definition}
                onChange={(e) => setGlossary((rows) => rows.map((r, j) => (j === i ? { ...r, definition: e.target.value } : r)))}
                error={err(`glossary.${i}.definition`)}
              />
              <Button small variant="danger" onClick={() => setGlossary((rows) => rows.filter((_, j) => j !== i))} aria-label={`Remove term ${i + 1}`}>
                Remove
              </Button>
            </div>
          ))}
          <div className="row">
            <Button small onClick={() => setGlossary((rows) => [...rows, { term: '', definition: '' }])}>
              Add a term
            </Button>
            <Origin field="glossary" profile={profile} onReset={reset} busy={resetting('glossary')} />
          </div>
          {err('glossary') && <p className="field-error">{err('glossary')}</p>}
        </fieldset>
        <div className="profile-field">
          <Field label="Support e-mail" type="email" value={supportEmail} onChange={(e) => setSupportEmail(e.target.value)} error={err('support_email')} />
          <Origin field="support_email" profile={profile} onReset={reset} busy={resetting('support_email')} />
        </div>
        <div className="profile-field">
          <TextArea
            label="Support pages"
            hint="One address per line."
            rows={3}
            value={urls}
            onChange={(e) => setUrls(e.target.value)}
            error={err('support_urls')}
          />
          <Origin field="support_urls" profile={profile} onReset={reset} busy={resetting('support_urls')} />
        </div>
        <Check
          label="Approve new FAQ candidates automatically"
          hint="When on, new candidates are answered from at once, without your review."
          checked={autoApprove}
          onChange={setAutoApprove}
        />
        <ErrorBox error={patch.error && (patch.variables?.reset_fields || !fieldError(patch.error, ...known)) ? patch.error : null} />
        <Button type="submit" variant="primary" busy={patch.isPending && !patch.variables?.reset_fields}>
          Save profile
        </Button>
      </div>
    </form>
  )
}

export default function ProfileScreen() {
  const q = useQuery({ queryKey: ['profile'], queryFn: () => call(api.GET('/knowledge/profile')) })
  return (
    <>
      <PageHeader title="Knowledge profile" />
      <p className="hint">What the bot knows about your product. It is read from your documents; what you change here wins over later readings.</p>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : (
        <>
          <p className="row">
            <Badge tone={EXTRACTION[q.data.extraction_status][0]}>{EXTRACTION[q.data.extraction_status][1]}</Badge>
            <span className="muted">
              Last read: <When at={q.data.extracted_at} />
            </span>
          </p>
          {q.data.operator_fields.length > 0 && <p className="muted">Set by you: {q.data.operator_fields.map((f) => FIELD_WORDS[f] ?? f).join(', ')}.</p>}
          <ProfileForm key={q.data.updated_at} profile={q.data} />
        </>
      )}
    </>
  )
}
