import { sql, type Kysely } from 'kysely'

/**
 * E-mail conversations are never `visitor_gone` (#52): the sweep marked them about ten minutes after they
 * arrived (a mail sender has no widget stream), which dropped them out of the queue. The sweep now skips them;
 * this clears the marks it left.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    UPDATE escalation_tickets t SET visitor_gone = false, visitor_gone_at = NULL
    FROM chat_sessions s
    WHERE s.id = t.session_id AND s.tenant_id = t.tenant_id AND s.channel = 'email' AND t.visitor_gone;
    UPDATE chat_sessions SET visitor_gone = false WHERE channel = 'email' AND visitor_gone;
  `.execute(db)
}
