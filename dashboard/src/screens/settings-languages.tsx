import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call } from '../api/client'
import { Button, Check, ErrorBox, fieldError, Loading, Select } from '../ui/kit'
import { useToast } from '../ui/toast'

interface Languages {
  knowledge: string
  answer: string[]
  fallback: string
  detected_knowledge: { language: string; share: number; sampled: number } | null
  configured: boolean
  available: { code: string; name: string }[]
}

/**
 * The workspace's languages (#40): the knowledge's (proposed from the indexed pages), the languages the bot
 * answers in (none ticked: any), and the fallback for a visitor in another.
 */
export function LanguageSettings({ canChange }: { canChange: boolean }) {
  const q = useQuery({ queryKey: ['languages'], queryFn: () => call(api.GET('/tenants/me/languages')) })
  if (q.isPending) return <Loading />
  if (q.isError) return <ErrorBox error={q.error} retry={() => q.refetch()} />
  return <LanguagesForm key={JSON.stringify(q.data)} initial={q.data as Languages} canChange={canChange} />
}

function LanguagesForm({ initial, canChange }: { initial: Languages; canChange: boolean }) {
  const detected = initial.detected_knowledge
  const [knowledge, setKnowledge] = useState(!initial.configured && detected ? detected.language : initial.knowledge)
  const [answer, setAnswer] = useState<string[]>(initial.answer)
  const [fallback, setFallback] = useState(initial.fallback)
  const qc = useQueryClient()
  const toast = useToast()
  const save = useMutation({
    mutationFn: () => call(api.PUT('/tenants/me/languages', { body: { knowledge, answer, fallback } })),
    onSuccess: (l) => {
      qc.setQueryData(['languages'], l)
      toast('Languages saved')
    },
  })
  const options = initial.available.map((a) => [a.code, `${a.name} (${a.code})`] as const)
  const name = (code: string) => initial.available.find((a) => a.code === code)?.name ?? code
  const errs = fieldError(save.error, 'knowledge', 'answer', 'fallback')
  const toggle = (code: string, on: boolean) => setAnswer((a) => (on ? [...a, code] : a.filter((c) => c !== code)))
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
      noValidate
    >
      <fieldset disabled={!canChange} className="plain">
        <Select label="Language of the knowledge" value={knowledge} options={options} onChange={setKnowledge} />
        <p className="hint">
          {detected
            ? `Read from ${detected.sampled} indexed passages: ${name(detected.language)} (${Math.round(detected.share * 100)} %).${
                !initial.configured ? ' Proposed above; save to keep it.' : ''
              }`
            : 'Nothing indexed yet to read the language from.'}{' '}
          Questions in other languages are also translated into it for the search.
        </p>
        <h3 id="lang-answer">Answer in</h3>
        <p className="hint">None ticked: the bot answers in the visitor&apos;s language, whichever it is.</p>
        <div className="chips" role="group" aria-labelledby="lang-answer">
          {initial.available.map((a) => (
            <Check key={a.code} label={a.name} checked={answer.includes(a.code)} onChange={(on) => toggle(a.code, on)} />
          ))}
        </div>
        <Select label="Fallback language" value={fallback} options={options} onChange={setFallback} />
        <p className="hint">A visitor writing in a language the bot does not answer in is told so once, in their language, and answered in this one.</p>
      </fieldset>
      {errs && <p className="field-error">{errs}</p>}
      <ErrorBox error={save.error && !errs ? save.error : null} />
      {canChange && (
        <Button type="submit" variant="primary" busy={save.isPending}>
          Save languages
        </Button>
      )}
    </form>
  )
}
