import { useQuery } from '@tanstack/react-query'
import type { ReactNode } from 'react'
import { Link } from 'wouter'
import { api, call } from '../api/client'

import { useBots, useRole, useTenant } from '../session'
import { knowledgeLine } from '../status-words'
import { CopyButton, ErrorBox, Loading, PageHeader } from '../ui/kit'
import { embedSnippet, ModelKeyForm, ProviderStatus } from './shared'

function Step({ n, done, title, children }: { n: number; done: boolean; title: string; children: ReactNode }) {
  return (
    <li className={done ? 'step-done' : undefined}>
      <div className="step-head">
        <span className="step-mark" aria-hidden="true">
          {done ? '✓' : n}
        </span>
        <h2>
          {title}
          <span className="sr-only">{done ? ' (done)' : ' (to do)'}</span>
        </h2>
      </div>
      <div className="step-body">{children}</div>
    </li>
  )
}

/** The first-run checklist: model key, knowledge, embed snippet, a first question in the preview. */
export default function Home() {
  const { may } = useRole()
  const tenant = useTenant()
  const bots = useBots()
  const docs = useQuery({ queryKey: ['sources'], queryFn: () => call(api.GET('/documents/sources')), refetchInterval: 5000 })
  const sessions = useQuery({ queryKey: ['sessions', 0], queryFn: () => call(api.GET('/chat/sessions', { params: { query: { limit: 20, offset: 0 } } })) })
  if (tenant.isPending || bots.isPending || docs.isPending || sessions.isPending) return <Loading />
  const error = tenant.error ?? bots.error ?? docs.error ?? sessions.error
  if (error) return <ErrorBox error={error} retry={() => void Promise.all([tenant.refetch(), bots.refetch(), docs.refetch(), sessions.refetch()])} />
  const bot = bots.data!.items.find((b) => b.is_active) ?? bots.data!.items[0]
  const hasKey = tenant.data!.has_llm_key
  const readyDocs = docs.data!.documents.filter((d) => d.status === 'ready').length
  const indexedPages = docs.data!.url_sources.reduce((n, s) => n + s.pages_indexed, 0)
  const hasKnowledge = readyDocs > 0 || indexedPages > 0
  const asked = sessions.data!.total > 0
  const steps = [hasKey, hasKnowledge, !!bot, asked]
  const doneCount = steps.filter(Boolean).length
  return (
    <>
      <PageHeader title="Get started" />
      <p className="muted">{doneCount === steps.length ? 'All set: your bot answers from your knowledge.' : `${doneCount} of ${steps.length} steps done.`}</p>
      <ol className="checklist">
        <Step n={1} done={hasKey} title="Connect the language model">
          {may('workspace') ? (
            <ModelKeyForm tenant={tenant.data!} />
          ) : (
            <p>{hasKey ? 'The model key is set.' : 'The workspace owner sets the model key: ask them to add it under Settings.'}</p>
          )}
          <ProviderStatus />
        </Step>
        <Step n={2} done={hasKnowledge} title="Add knowledge">
          <p>{hasKnowledge ? knowledgeLine(readyDocs, indexedPages) : 'Upload your help articles, manuals or FAQs, or let the bot read your website.'}</p>
          <Link className="btn btn-small" href="/knowledge">
            {hasKnowledge ? 'Manage knowledge' : 'Upload files or add a website'}
          </Link>
        </Step>
        <Step n={3} done={!!bot} title="Put the chat on your site">
          {bot ? (
            <>
              <p>Paste this before the closing &lt;/body&gt; tag of your site:</p>
              <pre>{embedSnippet(bot.public_id)}</pre>
              <CopyButton text={embedSnippet(bot.public_id)} label="Copy snippet" />
            </>
          ) : (
            <Link className="btn btn-small" href="/bots">
              Create a bot
            </Link>
          )}
        </Step>
        <Step n={4} done={asked} title="Ask your bot a first question">
          <p>Try the real chat widget in the preview and check that the answer cites your documents.</p>
          {bot && (
            <Link className="btn btn-small btn-primary" href={`/bots/${bot.id}#preview`}>
              Open the preview
            </Link>
          )}
          {asked && (
            <p>
              <Link href="/conversations">See the conversations</Link>
            </p>
          )}
        </Step>
      </ol>
    </>
  )
}
