import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api/client'
import type { Tenant } from '../api/types'
import { useRole, useTenant } from '../session'
import { Badge, Button, Check, Empty, ErrorBox, Field, fieldError, Loading, PageHeader, Pager, When } from '../ui/kit'
import { useToast } from '../ui/toast'
import { RoutingSettings } from './settings-routing'
import { OfficeHours } from './settings-hours'
import { LanguageSettings } from './settings-languages'
import { ApiKeys, SigningSecret } from './settings-keys'
import { ModelKeyForm, ProviderStatus } from './shared'

type Optional = 'ID_DOC' | 'IP' | 'URL_TOKEN'

const OPTIONAL: [Optional, string, string][] = [
  ['ID_DOC', 'ID document numbers', 'Passport, ID card and similar numbers.'],
  ['IP', 'IP addresses', 'IPv4 and IPv6 addresses typed into the chat.'],
  ['URL_TOKEN', 'Secrets in links', 'Tokens and keys inside web addresses.'],
]
const ENTITY_WORDS: Record<string, string> = {
  EMAIL: 'E-mail addresses',
  PHONE: 'Phone numbers',
  CARD: 'Payment card numbers',
  API_KEY: 'API keys',
  PASSWORD: 'Passwords',
  ID_DOC: 'ID document numbers',
  IP: 'IP addresses',
  URL_TOKEN: 'Secrets in links',
}
const ACTION_WORDS: Record<string, string> = { redacted: 'Masked', original_viewed: 'Original viewed', original_deleted: 'Original deleted' }

function Section({ id, title, children, hint }: { id: string; title: string; hint?: string; children: React.ReactNode }) {
  return (
    <section className="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {hint && <p className="hint">{hint}</p>}
      {children}
    </section>
  )
}

function Workspace({ tenant }: { tenant: Tenant }) {
  const [name, setName] = useState(tenant.name)
  const [email, setEmail] = useState(tenant.support_email ?? '')
  const qc = useQueryClient()
  const toast = useToast()
  const save = useMutation({
    mutationFn: () => call(api.PATCH('/tenants/me', { body: { name: name.trim(), support_email: email.trim() } })),
    onSuccess: (t) => {
      qc.setQueryData(['tenant'], t)
      toast('Workspace saved')
    },
  })
  const nErr = fieldError(save.error, 'name')
  const eErr = fieldError(save.error, 'support_email')
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
      noValidate
    >
      <Field label="Workspace name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} error={nErr} />
      <Field
        label="Support e-mail"
        type="email"
        value={email}
        onChange={(e) => setEmail(e.target.value)}
        error={eErr}
        hint="Ticket notifications go here unless a second-level address is set below. Empty: to your login e-mail."
      />
      <ErrorBox error={save.error && !nErr && !eErr ? save.error : null} />
      <Button type="submit" variant="primary" busy={save.isPending}>
        Save workspace
      </Button>
    </form>
  )
}

function SupportSettings() {
  const q = useQuery({ queryKey: ['support-settings'], queryFn: () => call(api.GET('/tenants/me/support-settings')) })
  if (q.isPending) return <Loading />
  if (q.isError) return <ErrorBox error={q.error} retry={() => q.refetch()} />
  return <SupportForm key={`${q.data.l2_email}|${q.data.escalation_language}`} l2={q.data.l2_email ?? ''} lang={q.data.escalation_language ?? ''} />
}

function SupportForm({ l2, lang }: { l2: string; lang: string }) {
  const [email, setEmail] = useState(l2)
  const [language, setLanguage] = useState(lang)
  const qc = useQueryClient()
  const toast = useToast()
  const save = useMutation({
    mutationFn: () => call(api.PUT('/tenants/me/support-settings', { body: { l2_email: email.trim(), escalation_language: language.trim() } })),
    onSuccess: (s) => {
      qc.setQueryData(['support-settings'], s)
      toast('Support settings saved')
    },
  })
  const eErr = fieldError(save.error, 'l2_email')
  const lErr = fieldError(save.error, 'escalation_language')
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
      noValidate
    >
      <Field
        label="Second-level support e-mail"
        type="email"
        value={email}
        onChange={(e) => setEmail(e.target.value)}
        error={eErr}
        hint="Ticket notifications go to this address first."
      />
      <Field
        label="Language of ticket notifications"
        value={language}
        maxLength={35}
        onChange={(e) => setLanguage(e.target.value)}
        error={lErr}
        hint="A language tag such as en or de. Empty: English."
      />
      <ErrorBox error={save.error && !eErr && !lErr ? save.error : null} />
      <Button type="submit" variant="primary" busy={save.isPending}>
        Save support settings
      </Button>
    </form>
  )
}

function Privacy() {
  const q = useQuery({ queryKey: ['privacy'], queryFn: () => call(api.GET('/tenants/me/privacy')) })
  if (q.isPending) return <Loading />
  if (q.isError) return <ErrorBox error={q.error} retry={() => q.refetch()} />
  return <PrivacyForm key={q.data.optional_entity_types.join()} optional={q.data.optional_entity_types} mandatory={q.data.mandatory_entity_types} />
}

function PrivacyForm({ optional, mandatory }: { optional: string[]; mandatory: string[] }) {
  const [on, setOn] = useState(() => new Set(optional))
  const qc = useQueryClient()
  const toast = useToast()
  const save = useMutation({
    mutationFn: () => call(api.PUT('/tenants/me/privacy', { body: { optional_entity_types: OPTIONAL.map(([v]) => v).filter((v) => on.has(v)) } })),
    onSuccess: (p) => {
      qc.setQueryData(['privacy'], p)
      toast('Privacy settings saved')
    },
  })
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <p>Always masked before anything is stored or sent to the model:</p>
      <ul className="chips">
        {mandatory.map((m) => (
          <li key={m}>
            <Badge>{ENTITY_WORDS[m] ?? m}</Badge>
          </li>
        ))}
      </ul>
      <fieldset>
        <legend>Also mask</legend>
        {OPTIONAL.map(([v, label, hint]) => (
          <Check
            key={v}
            label={label}
            hint={hint}
            checked={on.has(v)}
            onChange={(c) =>
              setOn((s) => {
                const n = new Set(s)
                if (c) n.add(v)
                else n.delete(v)
                return n
              })
            }
          />
        ))}
      </fieldset>
      <ErrorBox error={save.error} />
      <Button type="submit" variant="primary" busy={save.isPending}>
        Save privacy settings
      </Button>
    </form>
  )
}

const PII_LIMIT = 20

function PiiEvents() {
  const [offset, setOffset] = useState(0)
  const [days, setDays] = useState('365')
  const qc = useQueryClient()
  const toast = useToast()
  const q = useQuery({
    queryKey: ['pii-events', offset],
    queryFn: () => call(api.GET('/tenants/privacy/pii-events', { params: { query: { limit: PII_LIMIT, offset } } })),
    placeholderData: (prev) => prev,
  })
  const cleanup = useMutation({
    mutationFn: () => call(api.DELETE('/tenants/privacy/pii-events/retention', { params: { query: { retention_days: Number(days) } } })),
    onSuccess: async (r) => {
      toast(`${r.deleted_count} older event${r.deleted_count === 1 ? '' : 's'} deleted`)
      setOffset(0)
      await qc.invalidateQueries({ queryKey: ['pii-events'] })
    },
  })
  const dErr = fieldError(cleanup.error, 'retention_days')
  return (
    <>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : q.data.items.length === 0 ? (
        <Empty title="No privacy events yet">
          <p>Masked personal data and views of original text are recorded here.</p>
        </Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table>
              <caption className="sr-only">Privacy audit trail</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">What</th>
                  <th scope="col">Action</th>
                  <th scope="col" className="num">
                    Count
                  </th>
                  <th scope="col">Where</th>
                </tr>
              </thead>
              <tbody>
                {q.data.items.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <When at={e.created_at} />
                    </td>
                    <td>{ENTITY_WORDS[e.entity_type] ?? e.entity_type}</td>
                    <td>{ACTION_WORDS[e.action] ?? e.action}</td>
                    <td className="num">{e.count}</td>
                    <td>
                      {e.ticket_id ? (
                        <Link href={`/tickets/${e.ticket_id}`}>Ticket</Link>
                      ) : e.session_id ? (
                        <Link href={`/conversations/${e.session_id}`}>Conversation</Link>
                      ) : (
                        <span className="muted">{e.direction === 'ticket' ? 'Ticket' : 'Message'}</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager label="Privacy event pages" offset={offset} limit={PII_LIMIT} total={q.data.total} onChange={setOffset} />
        </>
      )}
      <form
        className="row retention"
        onSubmit={(e) => {
          e.preventDefault()
          if (confirm(`Delete privacy events older than ${days} days?`)) cleanup.mutate()
        }}
        noValidate
      >
        <Field label="Keep events for (days)" type="number" min={1} inputMode="numeric" value={days} onChange={(e) => setDays(e.target.value)} error={dErr} />
        <Button type="submit" variant="danger" busy={cleanup.isPending}>
          Delete older events
        </Button>
      </form>
      <ErrorBox error={cleanup.error && !dErr ? cleanup.error : null} />
    </>
  )
}

/** What an admin sees instead of an owner-only section: the reason, not a failing form. */
function OwnerOnly({ what }: { what: string }) {
  return <p className="muted owner-only">Only the workspace owner {what}. Your role (admin) may see that it is set, not change it.</p>
}

export default function Settings() {
  const tenant = useTenant()
  const { may } = useRole()
  const owner = may('workspace')
  return (
    <>
      <PageHeader title="Settings" />
      <nav className="toc" aria-label="Settings sections">
        <a href="#s-model">Model key</a>
        <a href="#s-workspace">Workspace</a>
        <a href="#s-support">Support</a>
        <a href="#s-routing">Routing</a>
        <a href="#s-hours">Office hours</a>
        <a href="#s-languages">Languages</a>
        <a href="#s-privacy">Privacy</a>
        <a href="#s-keys">API keys</a>
        <a href="#s-signing">Signing secret</a>
        <Link href="/settings/saved-replies">Saved replies</Link>
      </nav>
      <Section id="s-model" title="Model key">
        {tenant.isPending ? (
          <Loading />
        ) : tenant.isError ? (
          <ErrorBox error={tenant.error} retry={() => tenant.refetch()} />
        ) : owner ? (
          <ModelKeyForm tenant={tenant.data} />
        ) : (
          <>
            <p>
              {tenant.data.has_llm_key ? (
                <>
                  A key is set: <code>{tenant.data.llm_key_hint ?? '••••'}</code>.
                </>
              ) : (
                'No model key is set yet.'
              )}
            </p>
            <OwnerOnly what="sets or replaces the model key" />
          </>
        )}
        <ProviderStatus />
      </Section>
      <Section id="s-workspace" title="Workspace">
        {tenant.isPending ? (
          <Loading />
        ) : tenant.isError ? (
          <ErrorBox error={tenant.error} retry={() => tenant.refetch()} />
        ) : (
          <Workspace key={tenant.data.updated_at} tenant={tenant.data} />
        )}
      </Section>
      <Section id="s-support" title="Support settings" hint="Where ticket notifications go and in which language.">
        <SupportSettings />
      </Section>
      <Section id="s-routing" title="Routing" hint="Who gets a conversation that is waiting for a person.">
        <RoutingSettings />
      </Section>
      <Section
        id="s-hours"
        title="Office hours"
        hint="The widget promises a person only inside these hours with someone online; outside them it says when you are back and asks for an e-mail."
      >
        <OfficeHours canChange={may('settings')} />
      </Section>
      <Section id="s-languages" title="Languages" hint="The language your help centre is written in, and the languages the bot answers visitors in.">
        <LanguageSettings canChange={may('settings')} />
      </Section>
      <Section id="s-privacy" title="Privacy" hint="Personal data in visitors' messages is masked before it is stored or sent to the model.">
        <Privacy />
        <h3>Audit trail</h3>
        <PiiEvents />
      </Section>
      <Section id="s-keys" title="Widget API keys" hint="For server-to-server chat (X-API-Key header). The browser widget does not need one.">
        {owner ? <ApiKeys /> : <OwnerOnly what="creates, rotates and revokes API keys" />}
      </Section>
      <Section id="s-signing" title="Signing secret" hint="Your site signs visitor identity tokens with it, so tickets show who the visitor is.">
        <SigningSecret canChange={owner} ownerOnly={<OwnerOnly what="creates and rotates the signing secret" />} />
      </Section>
    </>
  )
}
