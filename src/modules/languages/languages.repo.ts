import type { ChangeFeed } from '../../db/change-feed.js'
import type { Db } from '../../db/client.js'
import type { LanguageSettings, LanguageSource } from './languages.fns.js'

/** Change-feed topic (key: tenant id) announced by every write of a workspace's language settings. */
export const LANGUAGES_TOPIC = 'tenant_languages'

/** How many passages the knowledge's language is read from. */
export const SAMPLE_CHUNKS = 40

export function createLanguagesRepo(db: Db, changes: Pick<ChangeFeed, 'announce'>) {
  return {
    async find(tenantId: string): Promise<LanguageSettings | null> {
      const r = await db.selectFrom('tenant_languages').select(['knowledge', 'answer', 'fallback']).where('tenant_id', '=', tenantId).executeTakeFirst()
      return r ? { knowledge: r.knowledge, answer: r.answer, fallback: r.fallback } : null
    },

    async save(tenantId: string, s: LanguageSettings, now: Date): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const row = { knowledge: s.knowledge, answer: JSON.stringify(s.answer), fallback: s.fallback, updated_at: now }
        await trx
          .insertInto('tenant_languages')
          .values({ tenant_id: tenantId, ...row })
          .onConflict((oc) => oc.column('tenant_id').doUpdateSet(row))
          .execute()
        await changes.announce(trx, LANGUAGES_TOPIC, tenantId)
      })
    },

    /** Passages of the indexed knowledge, spread over its documents (the first chunks of the newest ones), cut to 1,000 characters. */
    async sampleTexts(tenantId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('chunks')
        .select((eb) => eb.fn<string>('left', ['content', eb.val(1000)]).as('text'))
        .where('tenant_id', '=', tenantId)
        .where('ordinal', '<', 3)
        .orderBy('document_id')
        .limit(SAMPLE_CHUNKS)
        .execute()
      return rows.map((r) => r.text)
    },

    /** The session's language, when known (null: not yet, or no such session of this tenant). */
    async sessionLanguage(tenantId: string, sessionId: string): Promise<string | null> {
      const r = await db.selectFrom('chat_sessions').select('language').where('tenant_id', '=', tenantId).where('id', '=', sessionId).executeTakeFirst()
      return r?.language ?? null
    },

    /** Sets a session's language once (a session that already has one keeps it), or as the visitor chose it. */
    async setSessionLanguage(tenantId: string, sessionId: string, language: string, source: LanguageSource): Promise<void> {
      // a detected language is set once; the visitor's choice in the widget's menu replaces whatever was there
      let q = db.updateTable('chat_sessions').set({ language, language_source: source }).where('tenant_id', '=', tenantId).where('id', '=', sessionId)
      if (source !== 'visitor') q = q.where('language', 'is', null)
      await q.execute()
    },
  }
}

export type LanguagesRepo = ReturnType<typeof createLanguagesRepo>
