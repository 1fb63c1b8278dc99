import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'wouter'
import { api, call, messageOf } from '../api/client'
import { useBots, useRole } from '../session'
import { Badge, Button, Empty, ErrorBox, Loading, PageHeader } from '../ui/kit'
import { botScopeText } from '../ui/team'
import { ActionForm } from './action-form'
import { ImportOpenApi } from './action-import'
import { ActionSigningSecret } from './action-secret'
import { useEnabledToggle } from './action-toggle'
import type { Action } from './action-types'

/**
 * Actions: the workspace's own APIs the bot may call. Owners and admins define, import and enable them;
 * editors read them and dry-run them from each action's page (the service answers 403 to anything more).
 */
export const listActions = () => call(api.GET('/actions'))

function EnabledToggle({ a }: { a: Action }) {
  const toggle = useEnabledToggle(a)
  const id = `enabled-${a.id}`
  return (
    <div className="check">
      <input id={id} type="checkbox" checked={toggle.checked} aria-busy={toggle.busy || undefined} onChange={(e) => toggle.set(e.target.checked)} />
      <label htmlFor={id}>
        <span className="sr-only">{a.name} </span>
        {toggle.checked ? 'Enabled' : 'Disabled'}
      </label>
      {toggle.error && (
        <p className="field-error" role="alert">
          {messageOf(toggle.error)}
        </p>
      )}
    </div>
  )
}

/**
 * A model server that refuses tool calls (many Ollama models) gets no actions offered: the bot answers without
 * them rather than failing every turn. Said here, with the server's reason, so nobody wonders why none runs.
 */
function ToolsOff() {
  const q = useQuery({
    queryKey: ['llm-status'],
    queryFn: () => call(api.GET('/llm/status', { params: { query: { probe: false } } })),
    refetchInterval: 30_000,
  })
  if (q.data?.capabilities?.tools !== false) return null
  return (
    <div className="notice" role="status">
      <p>
        <Badge tone="bad">Actions are not offered</Badge> The model server does not take tool calls
        {q.data.capabilities.tools_reason ? `: ${q.data.capabilities.tools_reason}` : ''}. The bot answers without its actions until <code>CHAT_MODEL</code>{' '}
        names a model that supports tools (see docs/model-servers.md).
      </p>
    </div>
  )
}

export default function ActionsScreen() {
  const { may } = useRole()
  const manage = may('actions')
  const list = useQuery({ queryKey: ['actions'], queryFn: listActions })
  const bots = useBots()
  const [mode, setMode] = useState<'none' | 'new' | 'import'>('none')
  return (
    <>
      <PageHeader title="Actions">
        {manage && (
          <>
            <Button variant="primary" onClick={() => setMode(mode === 'new' ? 'none' : 'new')} aria-expanded={mode === 'new'}>
              New action
            </Button>
            <Button onClick={() => setMode(mode === 'import' ? 'none' : 'import')} aria-expanded={mode === 'import'}>
              Import from OpenAPI
            </Button>
          </>
        )}
      </PageHeader>
      <p className="muted">
        The bot calls these APIs of yours during a chat. A read action runs when the model asks for it; a write action runs only after the visitor confirms it.
        {manage ? '' : ' Your role may read and dry-run them; owners and admins change them.'}
      </p>
      <ToolsOff />
      {mode === 'new' && <ActionForm onDone={() => setMode('none')} />}
      {mode === 'import' && <ImportOpenApi onDone={() => setMode('none')} />}
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorBox error={list.error} retry={() => list.refetch()} />
      ) : list.data.items.length === 0 ? (
        <Empty title="No actions yet">{manage && <p>Create one, or import the operations of an OpenAPI document.</p>}</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="sr-only">Actions</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Bots</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((a) => (
                <tr key={a.id}>
                  <td>
                    <Link href={`/actions/${a.id}`}>{a.name}</Link>
                    <div className="muted small">
                      {a.method} {a.url}
                    </div>
                  </td>
                  <td>
                    <Badge tone={a.kind === 'write' ? 'warn' : 'neutral'}>{a.kind}</Badge>
                  </td>
                  <td>{manage ? <EnabledToggle a={a} /> : <Badge tone={a.enabled ? 'ok' : 'neutral'}>{a.enabled ? 'Enabled' : 'Disabled'}</Badge>}</td>
                  <td>{botScopeText(a.bot_ids, bots.data?.items)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {manage && <ActionSigningSecret />}
    </>
  )
}
