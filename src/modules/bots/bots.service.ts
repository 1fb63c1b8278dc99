import type { Static } from '@sinclair/typebox'
import { NoticeCache, type ChangeFeed } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import type { BotsTable } from '../../db/schema/foundation.js'
import { conflict, notFound, ValidationError } from '../../lib/errors.js'
import type { Clock } from '../../lib/clock.js'
import type { Actor } from '../../http/auth.js'
import type { AuditPort } from '../shared/audit.port.js'
import { inScope, type BotScope } from '../shared/bot-scope.js'
import type { Selectable, Updateable } from 'kysely'
import { newPublicId, normalizeDomains } from './bots.fns.js'
import { BOTS_TOPIC, type BotsRepo } from './bots.repo.js'
import type { BotCreate, BotUpdate } from './bots.schemas.js'

export type BotRow = Selectable<BotsTable>

export function presentBot(b: BotRow) {
  return {
    id: b.id,
    tenant_id: b.tenant_id,
    name: b.name,
    public_id: b.public_id,
    is_active: b.is_active,
    link_safety_enabled: b.link_safety_enabled,
    allowed_domains: b.allowed_domains,
    agent_instructions: b.agent_instructions,
    website_url: b.website_url,
    created_at: b.created_at.toISOString(),
    updated_at: b.updated_at.toISOString(),
  }
}

function domainsOrThrow(input: string[]): string[] {
  const r = normalizeDomains(input)
  if ('badIndex' in r) {
    throw new ValidationError(['body', 'allowed_domains', r.badIndex], `'${input[r.badIndex]}' is not a host name`, 'value_error')
  }
  return r.domains
}

export function createBotsService(deps: { db: Db; clock: Clock; repo: BotsRepo; changes: ChangeFeed; audit: AuditPort }) {
  const { db, clock, repo, audit } = deps
  const record = (tenantId: string, actor: Actor | undefined, action: string, bot: BotRow, trx: Db, detail?: Record<string, unknown>) =>
    actor
      ? audit.record(tenantId, { actorUserId: actor.userId, ip: actor.ip, action, itemType: 'bot', itemId: bot.id, detail: { name: bot.name, ...detail } }, trx)
      : undefined
  // A dashboard lists bots on every page; the list changes only through the repository's announced writes.
  const lists = new NoticeCache<BotRow[]>(deps.changes, BOTS_TOPIC, { ttlMs: 60_000, max: 10_000, clock })

  /** The bot, if it is the tenant's and within the caller's bots (another bot is a 404 like another tenant's). */
  async function get(tenantId: string, botId: string, scope: BotScope = null): Promise<BotRow> {
    const bot = inScope(scope, botId) ? await repo.find(tenantId, botId) : undefined
    if (!bot) throw notFound('Bot not found')
    return bot
  }

  const list = (tenantId: string) => lists.get(tenantId, () => repo.list(tenantId))

  return {
    list,
    /** The tenant's bots the caller sees (from the cached list). */
    listFor: async (tenantId: string, scope: BotScope) => (await list(tenantId)).filter((b) => inScope(scope, b.id)),
    /** The chat's bot lookups, answered from the cached list (no query per turn); same rules as the repository's. */
    lookups: {
      /** The tenant's default bot: its oldest active one (the list is ordered by created_at, id). */
      findDefault: async (tenantId: string) => (await list(tenantId)).find((b) => b.is_active),
      findTenantBotByPublicId: async (tenantId: string, publicId: string) => (await list(tenantId)).find((b) => b.public_id === publicId),
    },
    get,

    async create(tenantId: string, input: Static<typeof BotCreate>, trx: Db = db, actor?: Actor) {
      const bot = await repo.insert(
        tenantId,
        {
          name: input.name.trim(),
          public_id: newPublicId(),
          agent_instructions: input.agent_instructions ?? null,
          website_url: input.website_url?.trim() || null,
          link_safety_enabled: input.link_safety_enabled ?? false,
          allowed_domains: domainsOrThrow(input.allowed_domains ?? []),
          now: clock.now(),
        },
        trx,
      )
      await record(tenantId, actor, 'created', bot, trx)
      return bot
    },

    async update(tenantId: string, botId: string, input: Static<typeof BotUpdate>, actor?: Actor): Promise<BotRow> {
      const patch: Updateable<BotsTable> = { updated_at: clock.now() }
      if (input.name != null) patch.name = input.name.trim()
      if (input.is_active != null) patch.is_active = input.is_active
      if (input.agent_instructions !== undefined) patch.agent_instructions = input.agent_instructions
      if (input.link_safety_enabled != null) patch.link_safety_enabled = input.link_safety_enabled
      if (input.allowed_domains !== undefined) patch.allowed_domains = JSON.stringify(domainsOrThrow(input.allowed_domains ?? []))
      return db.transaction().execute(async (trx) => {
        await repo.lockTenant(tenantId, trx)
        const bot = await repo.find(tenantId, botId, trx)
        if (!bot) throw notFound('Bot not found')
        if (patch.is_active === false && bot.is_active && (await repo.countActiveExcept(tenantId, botId, trx)) === 0) {
          throw conflict('Cannot deactivate the last active bot', 'last_active_bot')
        }
        const updated = (await repo.update(tenantId, botId, patch, trx))!
        await record(tenantId, actor, 'updated', updated, trx, { fields: Object.keys(input) })
        return updated
      })
    },

    async remove(tenantId: string, botId: string, actor?: Actor): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await repo.lockTenant(tenantId, trx)
        const bot = await repo.find(tenantId, botId, trx)
        if (!bot) throw notFound('Bot not found')
        if (bot.is_active && (await repo.countActiveExcept(tenantId, botId, trx)) === 0) {
          throw conflict('Cannot delete the last active bot', 'last_active_bot')
        }
        await repo.delete(tenantId, botId, trx)
        await record(tenantId, actor, 'deleted', bot, trx)
      })
    },

    async setDisclosure(tenantId: string, botId: string, level: BotRow['disclosure_level'], actor?: Actor): Promise<BotRow> {
      return db.transaction().execute(async (trx) => {
        const bot = await repo.update(tenantId, botId, { disclosure_level: level, updated_at: clock.now() }, trx)
        if (!bot) throw notFound('Bot not found')
        await record(tenantId, actor, 'updated', bot, trx, { disclosure_level: level })
        return bot
      })
    },
  }
}

export type BotsService = ReturnType<typeof createBotsService>
