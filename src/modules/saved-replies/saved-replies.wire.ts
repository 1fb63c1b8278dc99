import type { AppContext } from '../../context.js'
import type { Guards } from '../../http/auth.js'
import { createSavedRepliesRepo } from './saved-replies.repo.js'
import { savedRepliesRoutes } from './saved-replies.routes.js'
import { createSavedRepliesService } from './saved-replies.service.js'

/** The agent's inbox helpers (#39): saved replies. */
export function wireSavedReplies(ctx: AppContext, guards: Guards) {
  const savedReplies = createSavedRepliesService({ repo: createSavedRepliesRepo(ctx.db), clock: ctx.clock })
  return { savedReplies, routes: savedRepliesRoutes({ guards, savedReplies }) }
}
