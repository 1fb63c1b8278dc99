import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import type { BotsRepo } from '../bots/bots.repo.js'
import type { ChatService } from '../chat/chat.service.js'
import type { EventsPort } from '../shared/events.port.js'
import { createAutoRun } from './evals.auto.js'
import { createEvalRunner, evalsJobs } from './evals.jobs.js'
import { createEvalsRepo } from './evals.repo.js'
import { evalsRoutes } from './evals.routes.js'
import { createEvalsService } from './evals.service.js'

/**
 * Evaluations: the workspace's test questions and runs of them. A run asks each case through the chat service's
 * own turn with the `evaluation` switch on (a dry run: the stages store and send nothing).
 */
export function wireEvals(
  ctx: AppContext,
  guards: Guards,
  deps: {
    bots: Pick<BotsRepo, 'find' | 'findDefault'>
    chat: Pick<ChatService, 'runTurn' | 'history' | 'getSession'>
    events?: EventsPort
    ticketQuestion?: (tenantId: string, sessionId: string) => Promise<string | null>
  },
) {
  const { db, clock, queue, config, log } = ctx
  const repo = createEvalsRepo(db)
  const evals = createEvalsService({ db, clock, queue, repo, bots: deps.bots, chat: deps.chat, ticketQuestion: deps.ticketQuestion })
  const runner = createEvalRunner({ repo, bots: deps.bots, runTurn: deps.chat.runTurn, clock, log, config, events: deps.events })
  const auto = createAutoRun({ repo, queue, clock, delaySeconds: config.EVAL_AUTO_RUN_DELAY_SECONDS, startRun: evals.startRun })
  // a knowledge change (document indexed or deleted, crawl finished): an automatic run if the workspace asked for one
  const knowledgeChanged = (tenantId: string) =>
    auto
      .knowledgeChanged(tenantId)
      .catch((err: Error) => log.warn({ tenant_id: tenantId, err: { message: err.message } }, 'automatic evaluation run not scheduled'))
  return { routes: evalsRoutes({ guards, evals }), jobs: evalsJobs({ runner, auto }), knowledgeChanged }
}
