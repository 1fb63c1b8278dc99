import type { Db } from '../../db/client.js'
import { type Cipher, decryptOrNull } from '../../lib/crypto.js'

const BATCH = 500

/**
 * Hashes the e-mail addresses written before 1665_email_search (the key is not in the database, so the
 * migration cannot): tickets and sessions with an encrypted address and no hash yet, in batches by id. An
 * address that no longer decrypts (another key, erased) is left without a hash and is simply not found by
 * e-mail. Runs at start; once done, each start reads two empty index ranges.
 */
export async function backfillEmailHashes(db: Db, cipher: Pick<Cipher, 'decrypt' | 'emailHash'>): Promise<{ tickets: number; sessions: number }> {
  const done = { tickets: 0, sessions: 0 }
  for (const [table, enc, hash, key] of [
    ['escalation_tickets', 'user_email_enc', 'user_email_hash', 'tickets'],
    ['chat_sessions', 'visitor_email_enc', 'visitor_email_hash', 'sessions'],
  ] as const) {
    let after = '00000000-0000-0000-0000-000000000000'
    for (;;) {
      const rows = (await db
        .selectFrom(table)
        .select(['id', `${enc} as enc`])
        .where(enc, 'is not', null)
        .where(hash, 'is', null)
        .where('id', '>', after)
        .orderBy('id')
        .limit(BATCH)
        .execute()) as { id: string; enc: string | null }[]
      if (rows.length === 0) break
      after = rows.at(-1)!.id
      for (const r of rows) {
        const address = decryptOrNull(cipher, r.enc)
        if (!address) continue
        await db
          .updateTable(table)
          .set({ [hash]: cipher.emailHash(address) })
          .where('id', '=', r.id)
          .where(hash, 'is', null)
          .execute()
        done[key]++
      }
    }
  }
  return done
}
