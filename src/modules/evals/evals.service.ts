import { FormatRegistry } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { Db } from '../../db/client.js'
import type { EvalExpect } from '../../db/schema/evals.js'
import type { JobQueue } from '../../jobs/queue.js'
import type { Clock } from '../../lib/clock.js'
import { findNul } from '../../http/input.js'
import { forbidden, notFound, ValidationError } from '../../lib/errors.js'
import type { BotsRepo } from '../bots/bots.repo.js'
import type { ChatService } from '../chat/chat.service.js'
import { inScope, type BotScope } from '../shared/bot-scope.js'
import { badPattern, decodeCaseCursor, diffRuns, encodeCaseCursor, importLines, junitXml } from './evals.fns.js'
import { RUN_MAX_ATTEMPTS } from './evals.jobs.js'
import { CASES_MAX, type CaseRow, type CaseValues, type EvalsRepo, type RunRow } from './evals.repo.js'
import { CaseInput, type CaseListQuery, type CasePatch, type RunInput, type Settings } from './evals.schemas.js'

const MAX_IMPORT_LINES = 1000

/** A case as the API shows it (never the row: no tenant, no update time). */
export function presentCase(c: CaseRow) {
  return {
    id: c.id,
    bot_id: c.bot_id,
    question: c.question,
    turns: c.turns,
    visitor_claims: c.visitor_claims,
    expect: c.expect,
    tags: c.tags,
    created_at: c.created_at.toISOString(),
  }
}

export function presentRun(r: RunRow) {
  return {
    id: r.id,
    status: r.status,
    partial: r.partial,
    progress: Math.round(r.progress * 1000) / 1000,
    created_at: r.created_at.toISOString(),
    finished_at: r.finished_at ? r.finished_at.toISOString() : null,
    pins: r.pins,
    totals: r.totals,
    trigger: r.trigger,
  }
}

const expectOf = (e: CaseInput['expect']): EvalExpect => ({
  outcome: e.outcome,
  sources_any: e.sources_any?.length ? e.sources_any : null,
  facts: e.facts?.length ? e.facts : null,
  forbidden: e.forbidden?.length ? e.forbidden : null,
  action: e.action ? { name: e.action.name, arguments: e.action.arguments ?? {} } : null,
  ...(e.language ? { language: e.language } : {}),
})

const valuesOf = (c: CaseInput): CaseValues => ({
  bot_id: c.bot_id ?? null,
  question: c.question.trim(),
  turns: c.turns?.length ? c.turns : null,
  visitor_claims: c.visitor_claims ?? null,
  expect: expectOf(c.expect),
  tags: [...new Set(c.tags ?? [])],
})

/** The rules a schema cannot say: a regex that compiles; a bot of this workspace. 422 / 404 naming the field. */
function checkRules(c: CaseValues) {
  const bad = badPattern(c.expect)
  if (bad) throw new ValidationError(bad.loc, bad.message)
}

/**
 * Bot scope of a member limited to some bots: it sees the cases of its bots and the bot-less (shared) ones,
 * but changes only its bots' cases; it sees and compares only the runs of its bots (a workspace-wide run,
 * bot_id null, covers every bot, so it is hidden from them).
 */
const caseVisible = (scope: BotScope, c: Pick<CaseRow, 'bot_id'>) => scope === null || c.bot_id === null || scope.includes(c.bot_id)
const runVisible = (scope: BotScope, r: Pick<RunRow, 'bot_id'>) => inScope(scope, r.bot_id)

// An imported line is checked by TypeBox's own checker, which knows no format unless told (bot_id is a uuid).
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v))

/** The first schema error of an imported line, as "field: message". */
function schemaError(input: unknown): string | null {
  const first = Value.Errors(CaseInput, input).First()
  if (!first) return null
  return `${first.path.replace(/^\//, '').replace(/\//g, '.') || 'line'}: ${first.message}`
}

/** Cases (the workspace's test questions) and runs of them; the run itself is the job's (evals.jobs.ts). */
export function createEvalsService(deps: {
  db: Db
  clock: Clock
  queue: JobQueue
  repo: EvalsRepo
  bots: Pick<BotsRepo, 'find'>
  chat: Pick<ChatService, 'history' | 'getSession'>
  /** The question of the session's latest ticket, for a hand-off without a chat message (the escalations module's). */
  ticketQuestion?: (tenantId: string, sessionId: string) => Promise<string | null>
}) {
  const { db, clock, queue, repo } = deps

  async function botMustExist(tenantId: string, botId: string | null | undefined, loc: string[], scope: BotScope = null) {
    if (botId && (!inScope(scope, botId) || !(await deps.bots.find(tenantId, botId)))) throw new ValidationError(loc, 'No such bot in this workspace')
  }

  /** The bot a limited member's new case or run belongs to: the one it names, else its only bot; null for the others. */
  function botOf(scope: BotScope, botId: string | null | undefined, loc: string[]): string | null {
    if (botId || scope === null) return botId ?? null
    if (scope.length === 1) return scope[0]!
    throw new ValidationError(loc, 'A member limited to some bots names one of its bots in bot_id', 'bot_required')
  }

  async function caseOr404(tenantId: string, id: string, scope: BotScope) {
    const c = await repo.findCase(tenantId, id)
    if (!c || !caseVisible(scope, c)) throw notFound('Evaluation case not found')
    if (scope !== null && c.bot_id === null)
      throw forbidden('This case is shared by every bot: only a member who sees every bot may change it', 'shared_eval_case')
    return c
  }

  async function runOr404(tenantId: string, id: string, scope: BotScope = null) {
    const r = await repo.findRun(tenantId, id)
    if (!r || !runVisible(scope, r)) throw notFound('Evaluation run not found')
    return r
  }

  return {
    async settings(tenantId: string): Promise<Settings> {
      return { evals_auto_run: await repo.autoRun(tenantId) }
    },

    /** Automatic runs ask every bot's cases: a member limited to some bots may not switch them. */
    async updateSettings(tenantId: string, input: Settings, scope: BotScope = null): Promise<Settings> {
      if (scope !== null) throw forbidden('Automatic runs cover every bot: only a member who sees every bot may switch them', 'bot_scope')
      await repo.setAutoRun(tenantId, input.evals_auto_run, clock.now())
      return { evals_auto_run: input.evals_auto_run }
    },

    /** A page of the cases in creation order, with the total a member sees (its bots' and the shared ones). */
    async listCases(tenantId: string, q: CaseListQuery, scope: BotScope = null) {
      const after = q.cursor ? decodeCaseCursor(q.cursor) : undefined
      if (after === null) throw new ValidationError(['query', 'cursor'], 'Invalid cursor: pass the next_cursor of the previous page', 'invalid_cursor')
      const { rows, total } = await repo.pageCases(tenantId, { tags: q.tag ? [q.tag] : null, scope, after, limit: q.limit + 1 })
      const page = rows.slice(0, q.limit)
      const last = page[page.length - 1]
      return {
        items: page.map(presentCase),
        next_cursor: rows.length > q.limit && last ? encodeCaseCursor(last.created_at, last.id) : null,
        total,
      }
    },

    async createCase(tenantId: string, input: CaseInput, scope: BotScope = null) {
      const values = valuesOf({ ...input, bot_id: botOf(scope, input.bot_id, ['body', 'bot_id']) })
      checkRules(values)
      await botMustExist(tenantId, values.bot_id, ['body', 'bot_id'], scope)
      const [row] = await repo.insertCases(tenantId, [values], clock.now())
      return presentCase(row!)
    },

    async updateCase(tenantId: string, id: string, patch: CasePatch, scope: BotScope = null) {
      const c = await caseOr404(tenantId, id, scope)
      const merged = { ...presentCase(c), ...patch, expect: patch.expect ?? c.expect } as CaseInput
      const values = valuesOf(merged)
      checkRules(values)
      if (patch.bot_id !== undefined) {
        values.bot_id = botOf(scope, values.bot_id, ['body', 'bot_id'])
        await botMustExist(tenantId, values.bot_id, ['body', 'bot_id'], scope)
      }
      const row = await repo.updateCase(tenantId, id, values, clock.now())
      if (!row) throw notFound('Evaluation case not found')
      return presentCase(row)
    },

    async deleteCase(tenantId: string, id: string, scope: BotScope = null) {
      await caseOr404(tenantId, id, scope)
      if (!(await repo.deleteCase(tenantId, id))) throw notFound('Evaluation case not found')
    },

    /** CSV or JSONL: every valid line becomes a case, every other is reported by its line number; all in one statement. */
    async importCases(tenantId: string, text: string, scope: BotScope = null) {
      // PostgreSQL cannot store U+0000: the file is refused as input, as a NUL in a JSON body is
      if (text.includes('\u0000')) throw new ValidationError(['body', 'file'], 'The file must not contain NUL characters', 'string_nul')
      const lines = importLines(text)
      const errors: { line: number; message: string }[] = []
      const good: CaseValues[] = []
      const onlyBot = scope?.length === 1 ? scope[0]! : null
      for (const l of lines.slice(0, MAX_IMPORT_LINES)) {
        if ('error' in l) {
          errors.push({ line: l.line, message: l.error })
          continue
        }
        const nul = findNul(l.input)
        const bad = nul ? `${nul.join('.') || 'value'}: must not contain NUL characters` : schemaError(l.input)
        if (bad) {
          errors.push({ line: l.line, message: bad })
          continue
        }
        const values = valuesOf(l.input as CaseInput)
        if (scope !== null && !values.bot_id) values.bot_id = onlyBot
        const pattern = badPattern(values.expect)
        if (pattern) errors.push({ line: l.line, message: `${pattern.loc.slice(1).join('.')}: ${pattern.message}` })
        else if (scope !== null && !values.bot_id) errors.push({ line: l.line, message: 'bot_id: A member limited to some bots names one of its bots' })
        else if (values.bot_id && (!inScope(scope, values.bot_id) || !(await deps.bots.find(tenantId, values.bot_id))))
          errors.push({ line: l.line, message: 'bot_id: No such bot in this workspace' })
        else good.push(values)
      }
      if (lines.length > MAX_IMPORT_LINES) errors.push({ line: lines[MAX_IMPORT_LINES]!.line, message: `At most ${MAX_IMPORT_LINES} cases per import` })
      const created = await repo.insertCases(tenantId, good, clock.now())
      return { created: created.length, errors }
    },

    /**
     * A logged conversation's last visitor question (or, without one, its ticket's) as a case of the conversation's
     * bot; handed off or answered, as it went, unless `expect` says. Another bot's conversation is a 404 for a member limited to some bots.
     */
    async caseFromSession(tenantId: string, sessionId: string, expect?: CaseInput['expect'], scope: BotScope = null) {
      const session = await deps.chat.getSession(tenantId, sessionId)
      if (!session || !inScope(scope, session.bot_id)) throw notFound('Session not found')
      const h = await deps.chat.history(tenantId, sessionId)
      const users = h.messages.filter((m) => m.role === 'user' && !m.from_operator)
      // a hand-off from the widget's button with a note and no chat message: the ticket's question is the visitor's
      const question = users.at(-1)?.content ?? (await deps.ticketQuestion?.(tenantId, sessionId)) ?? null
      if (!question) throw new ValidationError(['path', 'session_id'], 'This conversation has no visitor question')
      const earlier = users.slice(-11, -1).map((m) => m.content.slice(0, 2000))
      const handedOff = h.ticket_number !== null || h.owner !== 'bot'
      const values = valuesOf({
        bot_id: session.bot_id,
        question: question.slice(0, 2000),
        turns: earlier.length ? earlier : null,
        expect: expect ?? { outcome: handedOff ? 'handed_off' : 'answered' },
        tags: ['from-session'],
      })
      checkRules(values)
      const [row] = await repo.insertCases(tenantId, [values], clock.now())
      return presentCase(row!)
    },

    /**
     * A queued run and its job, committed together; a second run while one is active is a 409. A member limited
     * to some bots runs one of its bots (named, or its only one): a workspace-wide run would ask other bots' cases.
     */
    async startRun(tenantId: string, input: RunInput, userId: string | null, scope: BotScope = null, trigger: 'manual' | 'auto' = 'manual') {
      const botId = botOf(scope, input.bot_id, ['body', 'bot_id'])
      await botMustExist(tenantId, botId, ['body', 'bot_id'], scope)
      const tags = input.tags?.length ? input.tags : null
      if ((await repo.countCases(tenantId, { tags, botId }, CASES_MAX + 1)) > CASES_MAX)
        throw new ValidationError(
          ['body', tags ? 'tags' : 'bot_id'],
          `A run asks at most ${CASES_MAX} cases and this one matches more: narrow it with tags or a bot`,
          'too_many_cases',
        )
      const run = await db.transaction().execute(async (trx) => {
        const r = await repo.insertRun(tenantId, { botId, tags, repeat: input.repeat ?? 1, createdBy: userId, trigger, now: clock.now() }, trx)
        await queue.enqueue('evals.run', { tenantId, runId: r.id }, { tenantId, dedupeKey: `eval-run:${r.id}`, maxAttempts: RUN_MAX_ATTEMPTS }, trx)
        return r
      })
      return { id: run.id, status: run.status }
    },

    async listRuns(tenantId: string, scope: BotScope = null) {
      return { items: (await repo.listRuns(tenantId)).filter((r) => runVisible(scope, r)).map(presentRun) }
    },

    async getRun(tenantId: string, id: string, scope: BotScope = null) {
      const r = await runOr404(tenantId, id, scope)
      return { ...presentRun(r), repeat: r.repeat, error: r.error, results: await repo.results(tenantId, id) }
    },

    async junit(tenantId: string, id: string, scope: BotScope = null) {
      const r = await runOr404(tenantId, id, scope)
      const [results, cases] = await Promise.all([repo.results(tenantId, id), repo.listCases(tenantId)])
      return junitXml(r, results, new Map(cases.map((c) => [c.id, c.question])))
    },

    async diff(tenantId: string, id: string, against: string, scope: BotScope = null) {
      await Promise.all([runOr404(tenantId, id, scope), runOr404(tenantId, against, scope)])
      const [now, before] = await Promise.all([repo.results(tenantId, id), repo.results(tenantId, against)])
      return diffRuns(now, before)
    },
  }
}

export type EvalsService = ReturnType<typeof createEvalsService>
