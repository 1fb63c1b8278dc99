import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import type { EmailAttachment, EmailMode, EmailStatus } from '../../db/schema/email-channel.js'
import { createCapsRepo } from './email-channel.caps.repo.js'

type Executor = Db

/** Postgres' unique violation: the same inbound Message-ID delivered twice at once. */
const isUniqueViolation = (err: unknown) => (err as { code?: string })?.code === '23505'

/** SQL of the e-mail channel; every method takes the tenant id first (the inbound lookups by token and address excepted). */
export function createEmailChannelRepo(db: Db) {
  return {
    ...createCapsRepo(db),

    settings(tenantId: string, botId: string, trx: Executor = db) {
      return trx.selectFrom('email_channels').selectAll().where('tenant_id', '=', tenantId).where('bot_id', '=', botId).executeTakeFirst()
    },

    /** Creates the bot's row (address and token) unless it has one; the row is then read back. */
    async ensure(tenantId: string, botId: string, v: { localPart: string; tokenHash: string; tokenEnc: string; now: Date }, trx: Executor = db) {
      await trx
        .insertInto('email_channels')
        .values({
          tenant_id: tenantId,
          bot_id: botId,
          local_part: v.localPart,
          token_hash: v.tokenHash,
          token_enc: v.tokenEnc,
          created_at: v.now,
          updated_at: v.now,
        })
        .onConflict((oc) => oc.columns(['tenant_id', 'bot_id']).doNothing())
        .execute()
      return trx.selectFrom('email_channels').selectAll().where('tenant_id', '=', tenantId).where('bot_id', '=', botId).executeTakeFirstOrThrow()
    },

    update(
      tenantId: string,
      botId: string,
      v: { enabled: boolean; mode: EmailMode; replyFrom: string | null; signature: string | null; now: Date },
      trx: Executor = db,
    ) {
      return trx
        .updateTable('email_channels')
        .set({ enabled: v.enabled, mode: v.mode, reply_from: v.replyFrom, signature: v.signature, updated_at: v.now })
        .where('tenant_id', '=', tenantId)
        .where('bot_id', '=', botId)
        .returningAll()
        .executeTakeFirstOrThrow()
    },

    /** A confirmation of reply_from's address mailed: the token's hash, the address, the expiry (an earlier token stops working). */
    setPendingSender(tenantId: string, botId: string, v: { tokenHash: string; address: string; expiresAt: Date; now: Date }, trx: Executor = db) {
      return trx
        .updateTable('email_channels')
        .set({ verify_token_hash: v.tokenHash, verify_address: v.address, verify_expires_at: v.expiresAt, updated_at: v.now })
        .where('tenant_id', '=', tenantId)
        .where('bot_id', '=', botId)
        .returningAll()
        .executeTakeFirstOrThrow()
    },

    /** No confirmation pending (reply_from cleared, or back to the confirmed address). The expiry stays: it dates the last link mailed. */
    clearPendingSender(tenantId: string, botId: string, trx: Executor = db) {
      return trx
        .updateTable('email_channels')
        .set({ verify_token_hash: null, verify_address: null })
        .where('tenant_id', '=', tenantId)
        .where('bot_id', '=', botId)
        .returningAll()
        .executeTakeFirstOrThrow()
    },

    /** Not tenant-scoped on purpose: the confirmation link's token is what names the bot. */
    byVerifyTokenHash(tokenHash: string) {
      return db.selectFrom('email_channels').selectAll().where('verify_token_hash', '=', tokenHash).executeTakeFirst()
    },

    /** The address confirmed; the token used up. */
    confirmSender(tenantId: string, botId: string, v: { address: string; now: Date }, trx: Executor = db) {
      return trx
        .updateTable('email_channels')
        .set({ reply_from_verified: v.address, verify_token_hash: null, verify_address: null, updated_at: v.now })
        .where('tenant_id', '=', tenantId)
        .where('bot_id', '=', botId)
        .execute()
    },

    rotate(tenantId: string, botId: string, v: { tokenHash: string; tokenEnc: string; now: Date }, trx: Executor = db) {
      return trx
        .updateTable('email_channels')
        .set({ token_hash: v.tokenHash, token_enc: v.tokenEnc, updated_at: v.now })
        .where('tenant_id', '=', tenantId)
        .where('bot_id', '=', botId)
        .returningAll()
        .executeTakeFirstOrThrow()
    },

    /** Not tenant-scoped on purpose: the webhook's token is what names the bot. */
    byTokenHash(tokenHash: string) {
      return db.selectFrom('email_channels').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
    },

    /** Not tenant-scoped on purpose: the SMTP recipient is what names the bot. */
    byLocalPart(localPart: string) {
      return db.selectFrom('email_channels').selectAll().where('local_part', '=', localPart.toLowerCase()).executeTakeFirst()
    },

    /** Records an inbound message once per bot and Message-ID; null when it was already there (a retry, a race). */
    async insertInbound(
      tenantId: string,
      m: {
        botId: string
        messageId: string
        senderEnc: string | null
        senderHash: string | null
        subject: string
        status: EmailStatus
        reason: string | null
        rawEnc: string | null
        attachments: EmailAttachment[]
        /** an ignored forwarding confirmation: its link, encrypted */
        draftEnc?: string | null
        now: Date
      },
      trx: Executor = db,
    ): Promise<{ id: string } | null> {
      try {
        const row = await trx
          .insertInto('email_messages')
          .values({
            tenant_id: tenantId,
            bot_id: m.botId,
            direction: 'in',
            message_id: m.messageId,
            sender_enc: m.senderEnc,
            sender_hash: m.senderHash,
            subject: m.subject,
            status: m.status,
            reason: m.reason,
            raw_enc: m.rawEnc,
            attachments: JSON.stringify(m.attachments),
            draft_enc: m.draftEnc ?? null,
            created_at: m.now,
            processed_at: m.status === 'queued' ? null : m.now,
          })
          .onConflict((oc) => oc.columns(['tenant_id', 'bot_id', 'direction', 'message_id']).doNothing())
          .returning('id')
          .executeTakeFirst()
        return row ?? null
      } catch (err) {
        if (isUniqueViolation(err)) return null
        throw err
      }
    },

    findByMessageId(tenantId: string, botId: string, messageId: string) {
      return db
        .selectFrom('email_messages')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('bot_id', '=', botId)
        .where('direction', '=', 'in')
        .where('message_id', '=', messageId)
        .executeTakeFirst()
    },

    attachSession(tenantId: string, id: string, sessionId: string, trx: Executor = db) {
      return trx.updateTable('email_messages').set({ session_id: sessionId }).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
    },

    /** An inbound message's listing, its stored files marked (issue 54). */
    async setAttachments(tenantId: string, id: string, attachments: EmailAttachment[]): Promise<void> {
      await db
        .updateTable('email_messages')
        .set({ attachments: JSON.stringify(attachments) })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .execute()
    },

    findInbound(tenantId: string, id: string, trx: Executor = db) {
      return trx
        .selectFrom('email_messages')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('direction', '=', 'in')
        .executeTakeFirst()
    },

    lockInbound(tenantId: string, id: string, trx: Executor) {
      return trx.selectFrom('email_messages').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).forUpdate().executeTakeFirst()
    },

    /** What became of an inbound message; the raw MIME is dropped once handled. */
    finish(
      tenantId: string,
      id: string,
      v: { status: EmailStatus; reason?: string | null; sessionId?: string | null; ticketNumber?: string | null; draftEnc?: string | null; now: Date },
      trx: Executor = db,
    ) {
      return trx
        .updateTable('email_messages')
        .set({
          status: v.status,
          reason: v.reason ?? null,
          session_id: v.sessionId ?? null,
          ticket_number: v.ticketNumber ?? null,
          draft_enc: v.draftEnc ?? null,
          raw_enc: null,
          processed_at: v.now,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .execute()
    },

    /** The session a thread belongs to: the newest of its messages (ours or the sender's) the ids name that names its correspondent. */
    async sessionOfThread(tenantId: string, botId: string, ids: string[]) {
      if (!ids.length) return null
      return (
        db
          .selectFrom('email_messages')
          .select(['session_id', 'sender_hash', 'subject'])
          .where('tenant_id', '=', tenantId)
          .where('bot_id', '=', botId)
          .where('message_id', 'in', ids)
          .where('session_id', 'is not', null)
          // a row that names no correspondent proves nothing about who writes (issue 50, finding 10)
          .where('sender_hash', 'is not', null)
          .orderBy('created_at', 'desc')
          .limit(1)
          .executeTakeFirst()
      )
    },

    /** The thread of a session: its first subject and every message-id, oldest first (References of a reply). */
    async threadOf(tenantId: string, sessionId: string, trx: Executor = db) {
      return trx
        .selectFrom('email_messages')
        .select(['id', 'direction', 'message_id', 'subject', 'sender_enc', 'bot_id', 'status'])
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('status', '!=', 'ignored')
        .orderBy('created_at')
        .orderBy('id')
        .limit(200)
        .execute()
    },

    /** An outgoing mail of ours, recorded so a reply naming its Message-ID finds the session. */
    async recordOut(
      tenantId: string,
      o: {
        botId: string
        messageId: string
        sessionId: string
        kind: string
        subject: string
        /** the session's correspondent (senderHash): a reply naming this mail continues the session only from them */
        senderHash: string
        /** the correspondent's mailbox (mailboxHash) for a bot mail counted against the caps; null for a person's mail */
        mailboxHash: string | null
        inboundId: string | null
        now: Date
      },
      trx: Executor = db,
    ) {
      await trx
        .insertInto('email_messages')
        .values({
          tenant_id: tenantId,
          bot_id: o.botId,
          direction: 'out',
          kind: o.kind,
          message_id: o.messageId,
          in_reply_to_id: o.inboundId,
          session_id: o.sessionId,
          sender_hash: o.senderHash,
          mailbox_hash: o.mailboxHash,
          subject: o.subject,
          status: 'sent',
          created_at: o.now,
          processed_at: o.now,
        })
        .onConflict((oc) =>
          oc
            .columns(['tenant_id', 'bot_id', 'direction', 'message_id'])
            .doUpdateSet({ status: 'sent', kind: o.kind, subject: o.subject, sender_hash: o.senderHash, processed_at: o.now }),
        )
        .execute()
    },

    dropReservation(tenantId: string, botId: string, messageId: string, trx: Executor = db) {
      return trx
        .deleteFrom('email_messages')
        .where('tenant_id', '=', tenantId)
        .where('bot_id', '=', botId)
        .where('direction', '=', 'out')
        .where('message_id', '=', messageId)
        .where('status', '=', 'reserved')
        .execute()
    },

    /** The bot's latest inbound messages and what became of each (the settings screen). */
    recent(tenantId: string, botId: string, limit: number) {
      return db
        .selectFrom('email_messages')
        .select(['id', 'sender_enc', 'subject', 'status', 'reason', 'ticket_number', 'session_id', 'attachments', 'draft_enc', 'created_at', 'processed_at'])
        .where('tenant_id', '=', tenantId)
        .where('bot_id', '=', botId)
        .where('direction', '=', 'in')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute()
    },

    /** The inbound messages of one session (a ticket's attachments and drafts). */
    inboundOfSession(tenantId: string, sessionId: string) {
      return db
        .selectFrom('email_messages')
        .select(['id', 'subject', 'status', 'attachments', 'draft_enc', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .where('direction', '=', 'in')
        .orderBy('created_at')
        .limit(200)
        .execute()
    },

    /** The session's e-mail channel facts (channel, bot), for the operator-reply mail. */
    session(tenantId: string, sessionId: string, trx: Executor = db) {
      return trx
        .selectFrom('chat_sessions')
        .select(['id', 'bot_id', 'channel', 'visitor_email_enc'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', sessionId)
        .executeTakeFirst()
    },

    /** The sender's address on an e-mail session, so tickets and operator replies reach it as a visitor's e-mail. */
    setVisitorEmail(tenantId: string, sessionId: string, email: { enc: string; hash: string }, trx: Executor = db) {
      return trx
        .updateTable('chat_sessions')
        .set({ visitor_email_enc: email.enc, visitor_email_hash: email.hash })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', sessionId)
        .execute()
    },

    /** The ticket of a session (for the ticket's e-mail facts). */
    /** The channel of a ticket's bot (a ticket reply address, its MAC already checked, names the ticket only). */
    channelOfTicket(ticketId: string) {
      return db
        .selectFrom('escalation_tickets as t')
        .innerJoin('email_channels as c', (j) => j.onRef('c.bot_id', '=', 't.bot_id').onRef('c.tenant_id', '=', 't.tenant_id'))
        .selectAll('c')
        .where('t.id', '=', ticketId)
        .executeTakeFirst()
    },

    /**
     * The workspace's member whose login address is `address` and who may answer tickets of the bot (a notice's
     * reply is posted as theirs): owners, admins and agents, within their bots. Undefined for anyone else.
     */
    async ticketMember(tenantId: string, address: string, botId: string) {
      const u = await db
        .selectFrom('users')
        .select(['id', 'role', 'bot_ids', 'can_view_original'])
        .where('tenant_id', '=', tenantId)
        .where(sql`lower(email)`, '=', address.trim().toLowerCase())
        .executeTakeFirst()
      if (!u || !['owner', 'admin', 'agent'].includes(u.role)) return undefined
      if (u.bot_ids && !u.bot_ids.includes(botId)) return undefined
      return u
    },

    ticketSession(tenantId: string, ticketId: string) {
      return db
        .selectFrom('escalation_tickets')
        .select(['id', 'session_id', 'bot_id', 'ticket_number'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', ticketId)
        .executeTakeFirst()
    },
  }
}

export type EmailChannelRepo = ReturnType<typeof createEmailChannelRepo>
