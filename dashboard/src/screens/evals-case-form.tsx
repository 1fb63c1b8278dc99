import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useState } from 'react'
import { api, call, messageOf } from '../api/client'
import { useBots } from '../session'
import { Button, Field, fieldError, lines, Select, TextArea } from '../ui/kit'
import { type EvalCase, type EvalCaseInput, OUTCOMES, tagsOf } from './evals-types'

type Outcome = EvalCaseInput['expect']['outcome']

/** The form's text values of a case (lists one per line, tags comma-separated, arguments as JSON). */
function initial(c: EvalCase | null) {
  return {
    bot: c?.bot_id ?? '',
    question: c?.question ?? '',
    turns: (c?.turns ?? []).join('\n'),
    outcome: (c?.expect.outcome ?? 'answered') as Outcome,
    sources: (c?.expect.sources_any ?? []).join('\n'),
    facts: (c?.expect.facts ?? []).join('\n'),
    forbidden: (c?.expect.forbidden ?? []).join('\n'),
    action: c?.expect.action?.name ?? '',
    args: c?.expect.action ? JSON.stringify(c.expect.action.arguments, null, 2) : '',
    tags: (c?.tags ?? []).join(', '),
  }
}

/** Creates a case, or changes one (`existing`); the service's field errors are shown at their fields. */
export function CaseForm({ existing, onDone }: { existing: EvalCase | null; onDone: () => void }) {
  const [v, setV] = useState(() => initial(existing))
  const [argsError, setArgsError] = useState<string | undefined>()
  const bots = useBots()
  const qc = useQueryClient()
  // the form opens above the list: focus moves to it, so a keyboard user does not stay at the Edit button below
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    heading.current?.focus()
    heading.current?.scrollIntoView({ block: 'nearest' })
  }, [])
  const set = (k: keyof typeof v) => (e: { target: { value: string } }) => setV({ ...v, [k]: e.target.value })
  const save = useMutation({
    mutationFn: (body: EvalCaseInput) =>
      existing ? call(api.PATCH('/evals/cases/{id}', { params: { path: { id: existing.id } }, body })) : call(api.POST('/evals/cases', { body })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['eval-cases'] })
      onDone()
    },
  })
  const submit = () => {
    let args: Record<string, unknown> = {}
    if (v.args.trim()) {
      try {
        const parsed = JSON.parse(v.args)
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object')
        args = parsed
      } catch {
        setArgsError('Write the arguments as a JSON object, for example {"order_id": "A-1001"}.')
        return
      }
    }
    setArgsError(undefined)
    save.mutate({
      bot_id: v.bot || null,
      question: v.question.trim(),
      turns: lines(v.turns).length ? lines(v.turns) : null,
      expect: {
        outcome: v.outcome,
        sources_any: lines(v.sources).length ? lines(v.sources) : null,
        facts: lines(v.facts).length ? lines(v.facts) : null,
        forbidden: lines(v.forbidden).length ? lines(v.forbidden) : null,
        action: v.action.trim() ? { name: v.action.trim(), arguments: args } : null,
      },
      tags: tagsOf(v.tags),
    })
  }
  const err = (...names: string[]) => fieldError(save.error, ...names)
  const title = existing ? 'Change the test case' : 'New test case'
  return (
    <form
      className="card"
      aria-label={title}
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        submit()
      }}
    >
      <h2 ref={heading} tabIndex={-1}>
        {title}
      </h2>
      <Select
        label="Bot"
        value={v.bot}
        options={[['', 'Any bot (the run’s bot, else the default)'] as const, ...(bots.data?.items ?? []).map((b) => [b.id, b.name] as const)]}
        onChange={(bot) => setV({ ...v, bot })}
      />
      {err('bot_id') && <p className="field-error">{err('bot_id')}</p>}
      <TextArea label="Question" rows={2} required value={v.question} onChange={set('question')} error={err('question')} />
      <TextArea label="Earlier visitor turns (optional, one per line)" rows={2} value={v.turns} onChange={set('turns')} error={err('turns')} />
      <Select label="Expected outcome" value={v.outcome} options={OUTCOMES} onChange={(outcome) => setV({ ...v, outcome })} />
      <div className="grid-2">
        <TextArea
          label="Sources, any of (one per line)"
          hint="Document ids or page addresses; the answer must cite one."
          rows={3}
          value={v.sources}
          onChange={set('sources')}
          error={err('expect.sources_any')}
        />
        <TextArea
          label="Facts the answer contains (one per line)"
          hint="Text (case does not matter) or a regular expression like /\d+ days/i."
          rows={3}
          value={v.facts}
          onChange={set('facts')}
          error={err('expect.facts')}
        />
        <TextArea
          label="Text the answer must not contain (one per line)"
          rows={3}
          value={v.forbidden}
          onChange={set('forbidden')}
          error={err('expect.forbidden')}
        />
        <div>
          <Field
            label="Expected action (optional)"
            hint="The action's name; it is never really called in a run."
            value={v.action}
            onChange={set('action')}
            error={err('expect.action')}
          />
          <TextArea
            label="With these arguments (JSON, a subset)"
            rows={2}
            value={v.args}
            onChange={set('args')}
            error={argsError}
            disabled={!v.action.trim()}
          />
        </div>
      </div>
      <Field label="Tags (comma-separated)" value={v.tags} onChange={set('tags')} error={err('tags')} />
      {save.isError && (
        <p className="field-error" role="alert">
          {messageOf(save.error)}
        </p>
      )}
      <div className="row">
        <Button type="submit" variant="primary" busy={save.isPending} disabled={!v.question.trim()}>
          {existing ? 'Save the case' : 'Create the case'}
        </Button>
        <Button onClick={onDone}>Cancel</Button>
      </div>
    </form>
  )
}
