import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { Link, useLocation } from 'wouter'
import { api, call } from '../api/client'
import type { Bot } from '../api/types'
import { Button, Check, CopyButton, ErrorBox, Field, fieldError, Loading, PageHeader, Select, TextArea } from '../ui/kit'
import { useToast } from '../ui/toast'
import { BotEmail } from './bot-email'
import { embedSnippet } from './shared'

const DISCLOSURE = [
  ['standard', 'Standard: says it is an AI assistant'],
  ['detailed', 'Detailed: also explains how answers are made'],
  ['corporate', 'Corporate: short, formal notice'],
] as const

function EditBot({ bot }: { bot: Bot }) {
  const [name, setName] = useState(bot.name)
  const [instructions, setInstructions] = useState(bot.agent_instructions ?? '')
  const [active, setActive] = useState(bot.is_active)
  const [linkSafety, setLinkSafety] = useState(bot.link_safety_enabled)
  const [domains, setDomains] = useState(bot.allowed_domains.join('\n'))
  const qc = useQueryClient()
  const toast = useToast()
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PATCH('/bots/{bot_id}', {
          params: { path: { bot_id: bot.id } },
          body: {
            name: name.trim(),
            agent_instructions: instructions.trim() || null,
            is_active: active,
            link_safety_enabled: linkSafety,
            allowed_domains: domains
              .split(/[\s,]+/)
              .map((d) => d.trim())
              .filter(Boolean),
          },
        }),
      ),
    onSuccess: (b) => {
      qc.setQueryData(['bot', bot.id], b)
      void qc.invalidateQueries({ queryKey: ['bots'] })
      toast('Bot saved')
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
      <TextArea
        label="Instructions for the bot"
        hint="Tone, what to answer and what to hand over to a human. Answers still come only from your knowledge."
        value={instructions}
        onChange={(e) => setInstructions(e.target.value)}
        error={fieldError(save.error, 'agent_instructions')}
      />
      <TextArea
        label="Allowed sites"
        hint="One host per line (example.com also allows its subdomains; localhost:3000 for local testing). Empty: any site may embed the bot."
        value={domains}
        rows={3}
        onChange={(e) => setDomains(e.target.value)}
        error={fieldError(save.error, 'allowed_domains')}
      />
      <Check label="Active (visitors can chat)" checked={active} onChange={setActive} />
      <Check label="Ask before opening links to other sites" checked={linkSafety} onChange={setLinkSafety} />
      <ErrorBox error={save.error && !fieldError(save.error, 'name', 'agent_instructions', 'allowed_domains') ? save.error : null} />
      <Button type="submit" variant="primary" busy={save.isPending}>
        Save changes
      </Button>
    </form>
  )
}

function Disclosure({ botId }: { botId: string }) {
  const qc = useQueryClient()
  const toast = useToast()
  const q = useQuery({ queryKey: ['disclosure', botId], queryFn: () => call(api.GET('/bots/{bot_id}/disclosure', { params: { path: { bot_id: botId } } })) })
  const save = useMutation({
    mutationFn: (level: (typeof DISCLOSURE)[number][0]) => call(api.PUT('/bots/{bot_id}/disclosure', { params: { path: { bot_id: botId } }, body: { level } })),
    onSuccess: (d) => {
      qc.setQueryData(['disclosure', botId], d)
      toast('Disclosure saved')
    },
  })
  return (
    <div className="card">
      <h2>AI disclosure</h2>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorBox error={q.error} retry={() => q.refetch()} />
      ) : (
        <Select label="What visitors are told" value={q.data.level} options={DISCLOSURE} onChange={(v) => save.mutate(v)} />
      )}
      <ErrorBox error={save.error} />
    </div>
  )
}

export default function BotDetail({ params }: { params: Record<string, string> }) {
  const id = params.id!
  const qc = useQueryClient()
  const [, navigate] = useLocation()
  const toast = useToast()
  const [previewKey, setPreviewKey] = useState(0)
  const bot = useQuery({ queryKey: ['bot', id], queryFn: () => call(api.GET('/bots/{bot_id}', { params: { path: { bot_id: id } } })) })
  const del = useMutation({
    mutationFn: () => call(api.DELETE('/bots/{bot_id}', { params: { path: { bot_id: id } } })),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['bots'] })
      toast('Bot deleted')
      navigate('/bots')
    },
  })
  useEffect(() => {
    if (bot.data && location.hash === '#preview') document.getElementById('preview')?.scrollIntoView()
  }, [bot.data])
  if (bot.isPending) return <Loading />
  if (bot.isError) return <ErrorBox error={bot.error} retry={() => bot.refetch()} />
  const b = bot.data
  const snippet = embedSnippet(b.public_id)
  return (
    <>
      <p>
        <Link href="/bots">← Bots</Link>
      </p>
      <PageHeader title={b.name}>
        <Button
          variant="danger"
          busy={del.isPending}
          onClick={() => confirm(`Delete the bot "${b.name}"? Its widget stops working on every site.`) && del.mutate()}
        >
          Delete bot
        </Button>
      </PageHeader>
      <ErrorBox error={del.error} />
      <div className="grid-2">
        <div>
          <EditBot key={b.updated_at} bot={b} />
          <Disclosure botId={b.id} />
          <BotEmail botId={b.id} />
        </div>
        <div>
          <div className="card">
            <h2>Embed on your site</h2>
            <p>Paste this before the closing &lt;/body&gt; tag:</p>
            <pre>{snippet}</pre>
            <CopyButton text={snippet} label="Copy snippet" />
          </div>
          <div className="card" id="preview">
            <div className="row" style={{ justifyContent: 'space-between' }}>
              <h2 style={{ margin: 0 }}>Preview</h2>
              <Button small onClick={() => setPreviewKey((k) => k + 1)}>
                Restart
              </Button>
            </div>
            <p className="hint">The real widget, answering from your knowledge. Conversations here show up under Conversations.</p>
            {b.is_active ? (
              <iframe
                key={previewKey}
                className="preview-frame"
                title={`Chat preview of ${b.name}`}
                src={`/app/preview?bot=${encodeURIComponent(b.public_id)}`}
              />
            ) : (
              <p className="notice">The bot is inactive. Activate it to try it here.</p>
            )}
          </div>
        </div>
      </div>
    </>
  )
}
