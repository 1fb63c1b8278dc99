/**
 * The audit log's keyset cursor: the last entry's time and id, so the next page starts strictly after it
 * (newest first) however many entries arrive meanwhile. Opaque to clients (base64url of "<ms>.<id>").
 */
export function encodeCursor(at: Date, id: string): string {
  return Buffer.from(`${at.getTime()}.${id}`).toString('base64url')
}

export function decodeCursor(cursor: string): { at: Date; id: string } | null {
  const m = /^(\d{1,15})\.(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!m) return null
  const at = new Date(Number(m[1]))
  return Number.isNaN(at.getTime()) ? null : { at, id: m[2]! }
}

/** Detail values kept short: an entry records what happened, never a document's text or a secret. */
export function boundDetail(detail: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(detail ?? {}).slice(0, 20)) {
    if (v === null || typeof v === 'number' || typeof v === 'boolean') out[k] = v
    else if (typeof v === 'string') out[k] = v.length > 300 ? `${v.slice(0, 299)}…` : v
    else if (Array.isArray(v)) out[k] = v.slice(0, 50).map((x) => (typeof x === 'string' ? x.slice(0, 100) : x))
    else if (v !== undefined) out[k] = (JSON.stringify(v) ?? '').length > 1000 ? '…' : v
  }
  return out
}
