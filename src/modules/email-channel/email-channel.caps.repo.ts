import type { Db } from '../../db/client.js'

type Executor = Db

/**
 * SQL of the e-mail channel's hourly caps (part of EmailChannelRepo): bot mails counted per mailbox and per bot,
 * and the conversation a capped sender's mail is held in. Every method takes the tenant id first.
 */
export function createCapsRepo(db: Db) {
  /** The bot mails (answers and ticket notices) since `since`: to one mailbox, and from the bot to anyone. */
  async function used(tenantId: string, r: { botId: string; mailboxHash: string; since: Date }, trx: Executor) {
    const row = await trx
      .selectFrom('email_messages')
      .select((eb) => [eb.fn.countAll<string>().as('bot'), eb.fn.count<string>(eb.case().when('mailbox_hash', '=', r.mailboxHash).then(1).end()).as('sender')])
      .where('tenant_id', '=', tenantId)
      .where('bot_id', '=', r.botId)
      .where('direction', '=', 'out')
      .where('kind', 'in', ['answer', 'notice'])
      .where('created_at', '>', r.since)
      .executeTakeFirstOrThrow()
    return { sender: Number(row.sender), bot: Number(row.bot) }
  }

  return {
    used: (tenantId: string, r: { botId: string; mailboxHash: string; since: Date }, trx: Executor = db) => used(tenantId, r, trx),

    /**
     * Takes one of the sender's hourly bot mails, or answers why not: the sender's mailbox (`mailboxHash`) has had
     * `senderCap` in the hour, or the bot `botCap` across all senders. The bot's channel row and the mailbox's row are
     * locked while counting (in that order), so concurrent deliveries cannot both take the last one. When refused,
     * the mailbox's held conversation is named (the one its capped mail goes into), and set to this mail's session
     * when it has none that is still open: the first capped mail opens the ticket, the next ones join it.
     */
    async reserve(
      tenantId: string,
      r: {
        botId: string
        senderHash: string
        mailboxHash: string
        inboundId: string
        sessionId: string
        messageId: string
        kind: string
        since: Date
        now: Date
        senderCap: number
        botCap: number
      },
      trx: Executor,
    ): Promise<{ ok: true } | { ok: false; reason: 'sender_rate_limited' | 'bot_rate_limited'; held: string }> {
      await trx.selectFrom('email_channels').select('bot_id').where('tenant_id', '=', tenantId).where('bot_id', '=', r.botId).forUpdate().execute()
      await trx
        .insertInto('email_senders')
        .values({ tenant_id: tenantId, bot_id: r.botId, sender_hash: r.mailboxHash })
        .onConflict((oc) => oc.columns(['tenant_id', 'bot_id', 'sender_hash']).doNothing())
        .execute()
      const sender = await trx
        .selectFrom('email_senders')
        .select('held_session_id')
        .where('tenant_id', '=', tenantId)
        .where('bot_id', '=', r.botId)
        .where('sender_hash', '=', r.mailboxHash)
        .forUpdate()
        .executeTakeFirstOrThrow()
      const mine = await trx
        .selectFrom('email_messages')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('bot_id', '=', r.botId)
        .where('direction', '=', 'out')
        .where('message_id', '=', r.messageId)
        .executeTakeFirst()
      if (mine) return { ok: true }
      const n = await used(tenantId, { botId: r.botId, mailboxHash: r.mailboxHash, since: r.since }, trx)
      const reason = n.sender >= r.senderCap ? 'sender_rate_limited' : n.bot >= r.botCap ? 'bot_rate_limited' : null
      if (reason) {
        const held = sender.held_session_id
          ? await trx
              .selectFrom('chat_sessions')
              .select('id')
              .where('tenant_id', '=', tenantId)
              .where('id', '=', sender.held_session_id)
              .where('owner', '!=', 'closed')
              .executeTakeFirst()
          : undefined
        if (held) return { ok: false, reason, held: held.id }
        await trx
          .updateTable('email_senders')
          .set({ held_session_id: r.sessionId })
          .where('tenant_id', '=', tenantId)
          .where('bot_id', '=', r.botId)
          .where('sender_hash', '=', r.mailboxHash)
          .execute()
        return { ok: false, reason, held: r.sessionId }
      }
      await trx
        .insertInto('email_messages')
        .values({
          tenant_id: tenantId,
          bot_id: r.botId,
          direction: 'out',
          kind: r.kind,
          message_id: r.messageId,
          in_reply_to_id: r.inboundId,
          session_id: r.sessionId,
          sender_hash: r.senderHash,
          mailbox_hash: r.mailboxHash,
          status: 'reserved',
          created_at: r.now,
        })
        .execute()
      return { ok: true }
    },

    /** The conversation a capped mailbox's mail goes into, while a person has it (owner queue or human). */
    async heldSession(tenantId: string, botId: string, mailboxHash: string) {
      return db
        .selectFrom('email_senders')
        .innerJoin('chat_sessions', (j) =>
          j.onRef('chat_sessions.id', '=', 'email_senders.held_session_id').onRef('chat_sessions.tenant_id', '=', 'email_senders.tenant_id'),
        )
        .select(['chat_sessions.id', 'chat_sessions.owner'])
        .where('email_senders.tenant_id', '=', tenantId)
        .where('email_senders.bot_id', '=', botId)
        .where('email_senders.sender_hash', '=', mailboxHash)
        .where('chat_sessions.owner', 'in', ['queue', 'human'])
        .executeTakeFirst()
    },
  }
}
