import { sql, type Updateable } from 'kysely'
import type { ChangeFeed } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import type { BotsTable } from '../../db/schema/foundation.js'

type Executor = Db

/** Change-feed topic of a tenant's bots (key: tenant id); every write below announces it. */
export const BOTS_TOPIC = 'bots'

export function createBotsRepo(db: Db, changes: ChangeFeed) {
  return {
    list(tenantId: string, trx: Executor = db) {
      return trx.selectFrom('bots').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute()
    },
    find(tenantId: string, botId: string, trx: Executor = db) {
      return trx.selectFrom('bots').selectAll().where('tenant_id', '=', tenantId).where('id', '=', botId).executeTakeFirst()
    },
    /** Not tenant-scoped on purpose: the widget and identity tokens find a bot by its public id. */
    findByPublicId(publicId: string, trx: Executor = db) {
      return trx.selectFrom('bots').selectAll().where('public_id', '=', publicId).executeTakeFirst()
    },
    findTenantBotByPublicId(tenantId: string, publicId: string, trx: Executor = db) {
      return trx.selectFrom('bots').selectAll().where('tenant_id', '=', tenantId).where('public_id', '=', publicId).executeTakeFirst()
    },
    /** The tenant's default bot: its oldest active one. */
    findDefault(tenantId: string, trx: Executor = db) {
      return trx
        .selectFrom('bots')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('is_active', '=', true)
        .orderBy('created_at')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst()
    },
    async insert(
      tenantId: string,
      values: {
        name: string
        public_id: string
        agent_instructions: string | null
        website_url: string | null
        link_safety_enabled: boolean
        allowed_domains: string[]
        now: Date
      },
      trx: Executor = db,
    ) {
      const row = await trx
        .insertInto('bots')
        .values({
          tenant_id: tenantId,
          name: values.name,
          public_id: values.public_id,
          agent_instructions: values.agent_instructions,
          website_url: values.website_url,
          link_safety_enabled: values.link_safety_enabled,
          allowed_domains: JSON.stringify(values.allowed_domains),
          created_at: values.now,
          updated_at: values.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
      await changes.announce(trx, BOTS_TOPIC, tenantId)
      return row
    },
    async update(tenantId: string, botId: string, patch: Updateable<BotsTable>, trx: Executor = db) {
      const row = await trx.updateTable('bots').set(patch).where('tenant_id', '=', tenantId).where('id', '=', botId).returningAll().executeTakeFirst()
      await changes.announce(trx, BOTS_TOPIC, tenantId)
      return row
    },
    async delete(tenantId: string, botId: string, trx: Executor = db) {
      const result = await trx.deleteFrom('bots').where('tenant_id', '=', tenantId).where('id', '=', botId).executeTakeFirst()
      await changes.announce(trx, BOTS_TOPIC, tenantId)
      return result
    },
    countActiveExcept(tenantId: string, botId: string, trx: Executor = db) {
      return trx
        .selectFrom('bots')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('tenant_id', '=', tenantId)
        .where('is_active', '=', true)
        .where('id', '!=', botId)
        .executeTakeFirstOrThrow()
        .then((r) => r.n)
    },
    /** Serialises bot changes of one tenant so the last-active-bot rule cannot be raced. */
    lockTenant(tenantId: string, trx: Executor) {
      return trx.selectFrom('tenants').select('id').where('id', '=', tenantId).forUpdate().executeTakeFirst()
    },
  }
}

export type BotsRepo = ReturnType<typeof createBotsRepo>
