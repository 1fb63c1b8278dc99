/**
 * The bots a member is limited to (null: every bot of the workspace). Repositories take it beside the
 * tenant id and filter in SQL, so another bot's row is a 404 exactly like another tenant's.
 */
export type BotScope = readonly string[] | null

const NO_BOT = '00000000-0000-0000-0000-000000000000'

/** The ids for an `IN` filter; an empty scope matches nothing (an empty `IN ()` is not valid SQL). */
export const scopeIds = (scope: readonly string[]): string[] => (scope.length ? [...scope] : [NO_BOT])

export const inScope = (scope: BotScope, botId: string | null | undefined): boolean => scope === null || (!!botId && scope.includes(botId))
