import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import { createLanguagesRepo } from './languages.repo.js'
import { languagesRoutes } from './languages.routes.js'
import { createLanguagesService } from './languages.service.js'

/** Languages (#40): the workspace's settings, which the chat turn reads through `settingsFor`. */
export function wireLanguages(ctx: AppContext, guards: Guards) {
  const repo = createLanguagesRepo(ctx.db, ctx.database.changes)
  const languages = createLanguagesService({ repo, clock: ctx.clock, changes: ctx.database.changes })
  return { languages, routes: languagesRoutes({ guards, languages }) }
}
