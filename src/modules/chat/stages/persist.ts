import type { PiiAction, SourceRef } from '../../../db/schema/chat.js'
import type { PiiEvent } from '../chat.repo.js'

/**
 * Stage 10 helpers: what a turn stores besides its two messages. The documents "actually cited" are the
 * ones whose [n] the answer used; an answer without markers is attributed by word overlap instead, so a
 * model that forgets to cite does not leave the operator without sources.
 */

export interface CitableSource {
  n: number
  documentId: string | null
  title: string
  url: string | null
  text: string
}

const words = (t: string) => new Set((t.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? []).slice(0, 4000))

export function citedSources(answer: string, cited: number[], sources: CitableSource[]): CitableSource[] {
  const byN = new Map(sources.map((s) => [s.n, s]))
  let picked = [...new Set(cited)].map((n) => byN.get(n)).filter((s): s is CitableSource => !!s)
  if (picked.length === 0 && cited.length === 0) {
    const a = words(answer)
    if (a.size >= 3) {
      picked = sources
        .map((s) => {
          const w = words(s.text)
          let hit = 0
          for (const x of a) if (w.has(x)) hit++
          return { s, share: hit / a.size }
        })
        .filter((x) => x.share >= 0.5)
        .sort((x, y) => y.share - x.share)
        .slice(0, 3)
        .map((x) => x.s)
    }
  }
  return picked
}

/** Distinct document ids, in citation order. */
export function documentIds(sources: CitableSource[]): string[] {
  return [...new Set(sources.map((s) => s.documentId).filter((d): d is string => !!d))]
}

/** The visitor-facing source list: URL-backed documents only, one entry per URL. */
export function sourceRefs(sources: CitableSource[]): SourceRef[] {
  const seen = new Set<string>()
  const out: SourceRef[] = []
  for (const s of sources) {
    if (!s.url || seen.has(s.url)) continue
    seen.add(s.url)
    out.push({ title: s.title.split(' — ')[0]!.slice(0, 300), url: s.url })
  }
  return out
}

export function piiEvents(
  counts: Record<string, number>,
  p: { action: PiiAction; direction: 'message' | 'ticket'; sessionId?: string | null; ticketId?: string | null; actorUserId?: string | null },
): PiiEvent[] {
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([entityType, count]) => ({ entityType, count, ...p }))
}

/** Sums entity counts of several messages. */
export function sumCounts(list: (Record<string, number> | null | undefined)[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const c of list) for (const [k, v] of Object.entries(c ?? {})) out[k] = (out[k] ?? 0) + v
  return out
}

export const preview = (text: string, max = 200) => {
  const t = text.replace(/\s+/g, ' ').trim()
  return t.length > max ? `${t.slice(0, max - 1)}…` : t
}
