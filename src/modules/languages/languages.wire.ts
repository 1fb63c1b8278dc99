import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import { createLanguagesRepo } from './languages.repo.js'
import { languagesRoutes } from './languages.routes.js'
import { createLanguagesService } from './languages.service.js'
import { createOperatorTranslator } from './operator-translate.js'

/**
 * Languages (#40): the workspace's settings, which the chat turn reads through `settingsFor`, and the
 * translation of an operator's message into the visitor's language (the live module's `translate: true`).
 */
export function wireLanguages(ctx: AppContext, guards: Guards, deps: { llmKey: (tenantId: string) => Promise<string | null> }) {
  const repo = createLanguagesRepo(ctx.db, ctx.database.changes)
  const languages = createLanguagesService({ repo, clock: ctx.clock, changes: ctx.database.changes })
  const translateForVisitor = createOperatorTranslator({ repo, llm: ctx.llm, llmKey: deps.llmKey, model: ctx.config.CHAT_MODEL })
  return { languages, translateForVisitor, routes: languagesRoutes({ guards, languages }) }
}
