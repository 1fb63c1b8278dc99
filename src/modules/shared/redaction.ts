import type { Cipher } from '../../lib/crypto.js'
import { OPTIONAL_PII_TYPES, redact, type OptionalPiiType } from '../tenants/privacy/pii.fns.js'

/**
 * The visitor's text is redacted before it goes anywhere (model, database, logs, tickets). The
 * mandatory types always; ID_DOC, IP and URL_TOKEN as the tenant's privacy settings say. When something
 * was redacted the original is kept only encrypted, for the operator's explicit include_original view.
 */

export interface Redaction {
  /** What every later stage sees and what is stored. */
  text: string
  changed: boolean
  /** Entity counts by type; never values. */
  counts: Record<string, number>
  /** AES-GCM of the original, only when redaction changed something. */
  originalEnc: string | null
}

export function optionalTypes(configured: readonly string[] | null | undefined): ReadonlySet<OptionalPiiType> {
  const set = new Set<OptionalPiiType>()
  for (const t of configured ?? []) if ((OPTIONAL_PII_TYPES as readonly string[]).includes(t)) set.add(t as OptionalPiiType)
  return set
}

const nonZero = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).filter(([, v]) => v))

/** `locale`: the visitor's, when known ("fr-FR", "de"); its region is tried first for phone numbers without a country code. */
export function redactMessage(
  text: string,
  optional: readonly string[] | null | undefined,
  cipher: Pick<Cipher, 'encrypt'>,
  locale?: string | null,
): Redaction {
  const r = redact(text, { optional: optionalTypes(optional), locale })
  const changed = r.entities.length > 0
  return { text: r.text, changed, counts: nonZero(r.counts), originalEnc: changed ? cipher.encrypt(text) : null }
}

/** Entity counts by type of a text (an original being viewed or erased, for its audit event). */
export function entityCounts(text: string, optional: readonly string[] | null | undefined): Record<string, number> {
  return nonZero(redact(text, { optional: optionalTypes(optional) }).counts)
}

/**
 * Operator-written text (a reply, a resolution, an ideal answer) as its copies carry it: webhook payloads, the
 * Slack message, exports and the views of roles that may not see originals get the same redaction as a
 * visitor's text. The visitor it was written to, and roles that may see originals, get it as written.
 */
export function redactOperatorText(text: string, optional: readonly string[] | null | undefined): string {
  return redact(text, { optional: optionalTypes(optional) }).text
}
