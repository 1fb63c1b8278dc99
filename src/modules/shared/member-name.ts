import { type RawBuilder, sql } from 'kysely'

/**
 * How a member is named to visitors (#39): the display name they chose, else the bot's name + " team".
 * Never the e-mail's local part: "demo (support)" told visitors an address they were not meant to see.
 */
export const teamName = (botName: string | null | undefined): string => `${botName?.trim() || 'Support'} team`

export const visibleMemberName = (displayName: string | null | undefined, botName: string | null | undefined): string =>
  displayName?.trim() || teamName(botName)

/** The same in SQL, over a users row aliased `u` (may be null: no author) and a bot-name expression. */
export const memberNameSql = (botName: RawBuilder<string | null>) =>
  sql<string>`coalesce(nullif(trim(u.display_name), ''), coalesce(nullif(trim(${botName}), ''), 'Support') || ' team')`
