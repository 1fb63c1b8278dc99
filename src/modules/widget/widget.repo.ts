import { sql } from 'kysely'
import type { Db } from '../../db/client.js'

/**
 * What the public widget reads and writes itself: the session as seen from its bot, the read cursor and
 * the identified-session metrics. Turns, history and tickets go through the chat service.
 */
export function createWidgetRepo(db: Db) {
  return {
    /** A session of this tenant AND this bot; another bot's session id is simply not found. */
    findBotSession(tenantId: string, botId: string, sessionId: string) {
      return db
        .selectFrom('chat_sessions')
        .select(['id', 'bot_id', 'mode', 'chat_ended', 'owner', 'read_message_id'])
        .where('tenant_id', '=', tenantId)
        .where('bot_id', '=', botId)
        .where('id', '=', sessionId)
        .executeTakeFirst()
    },

    findSessionMessage(tenantId: string, sessionId: string, messageId: string) {
      return db
        .selectFrom('chat_messages')
        .select(['id', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('id', '=', messageId)
        .executeTakeFirst()
    },

    /**
     * Moves the read cursor to `messageId` only when that message is newer (created_at, then id) than the
     * one it points at, in one statement so two receipts racing cannot move it backwards. Returns the
     * cursor afterwards.
     */
    async advanceReadCursor(tenantId: string, sessionId: string, message: { id: string; created_at: Date }): Promise<string | null> {
      await sql`
        UPDATE chat_sessions s SET read_message_id = ${message.id}
        WHERE s.tenant_id = ${tenantId} AND s.id = ${sessionId}
          AND (s.read_message_id IS NULL OR NOT EXISTS (
            SELECT 1 FROM chat_messages cur
            WHERE cur.id = s.read_message_id AND cur.session_id = s.id
              AND (cur.created_at, cur.id) >= (${message.created_at}::timestamptz, ${message.id}::uuid)
          ))`.execute(db)
      const row = await db
        .selectFrom('chat_sessions')
        .select('read_message_id')
        .where('tenant_id', '=', tenantId)
        .where('id', '=', sessionId)
        .executeTakeFirst()
      return row?.read_message_id ?? null
    },

    /** Sources stored with the assistant messages of a session, for the history the widget restores. */
    async messageSources(tenantId: string, sessionId: string): Promise<Map<string, { title: string; url: string }[]>> {
      const rows = await db
        .selectFrom('chat_messages')
        .select(['id', 'sources'])
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('role', '=', 'assistant')
        .execute()
      return new Map(rows.map((r) => [r.id, Array.isArray(r.sources) ? r.sources : []]))
    },

    /** Widget sessions started since `since`: how many, how many identified, and the newest identified. */
    async sessionStats(tenantId: string, since: Date): Promise<{ identified: number; total: number; last: Date | null }> {
      const row = await db
        .selectFrom('chat_sessions')
        .select([sql<number>`count(*)::int`.as('total'), sql<number>`(count(*) FILTER (WHERE mode = 'identified'))::int`.as('identified')])
        .where('tenant_id', '=', tenantId)
        .where('channel', '=', 'widget')
        .where('created_at', '>=', since)
        .executeTakeFirstOrThrow()
      const last = await db
        .selectFrom('chat_sessions')
        .select(sql<Date | null>`max(created_at)`.as('last'))
        .where('tenant_id', '=', tenantId)
        .where('channel', '=', 'widget')
        .where('mode', '=', 'identified')
        .executeTakeFirstOrThrow()
      return { identified: row.identified, total: row.total, last: last.last ? new Date(last.last) : null }
    },
  }
}

export type WidgetRepo = ReturnType<typeof createWidgetRepo>
