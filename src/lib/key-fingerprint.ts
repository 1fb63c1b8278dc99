import { sql } from 'kysely'
import type { Logger } from 'pino'
import type { Db } from '../db/client.js'
import { keyFingerprint } from './crypto.js'

/**
 * Two instances on one database with different ENCRYPTION_KEYs (each generated its own outside production) fail
 * every secret the other wrote. The first start records the key's fingerprint; a start with another key is
 * refused in production and warned about loudly elsewhere, naming the setting.
 */
export async function checkKeyFingerprint(db: Db, hexKey: string, opts: { isProduction: boolean; log: Logger }): Promise<'recorded' | 'match' | 'mismatch'> {
  const mine = keyFingerprint(hexKey)
  const inserted = await sql<{ fingerprint: string }>`
    INSERT INTO encryption_key_fingerprint (id, fingerprint) VALUES (1, ${mine})
    ON CONFLICT (id) DO NOTHING RETURNING fingerprint`.execute(db)
  if (inserted.rows.length) return 'recorded'
  const { rows } = await sql<{ fingerprint: string }>`SELECT fingerprint FROM encryption_key_fingerprint WHERE id = 1`.execute(db)
  if (rows[0]?.fingerprint === mine) return 'match'
  const message =
    'ENCRYPTION_KEY differs from the key this database was written with: secrets and queued jobs written by the other instances cannot be read. Set the same ENCRYPTION_KEY on every instance that shares DATABASE_URL.'
  if (opts.isProduction) throw new Error(message)
  opts.log.error({ variable: 'ENCRYPTION_KEY' }, message)
  return 'mismatch'
}
