import { sql, type Kysely } from 'kysely'

/**
 * Working e-mail tickets (#52): a ticket's thread shows when each operator message was mailed, read by joining
 * the conversation's messages to their reply rows, so the rows are found by message.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX operator_replies_message_idx ON operator_replies (message_id) WHERE message_id IS NOT NULL`.execute(db)
}
