import { groupQuestions, termsCosine, tfidf } from '../gap-analyzer/cluster.fns.js'

/** A workspace gap as the scoped view matches questions to it (its label is never shown: it may quote another bot's visitor). */
export interface GapTerms {
  id: string
  source: string
  classification: string
  terms: Record<string, number>
}

export interface LoggedQuestion {
  question: string
  session_id: string | null
  created_at: Date
}

export interface ScopedTopic {
  gap_id: string
  source: string
  label: string
  classification: string
  question_count: number
  last_question_at: Date | null
  examples: { question: string; session_id: string | null }[]
}

/**
 * Unanswered topics built from one set of bots' questions only: each group of same-term questions joins the
 * workspace gap whose terms it is closest to (cosine at least `minCosine`); a topic's label, count and examples
 * come from these questions alone, so nothing of another bot's visitors shows. Topics no question joined are left out.
 */
export async function scopedTopics(gaps: GapTerms[], questions: LoggedQuestion[], limit: number, minCosine = 0.3): Promise<ScopedTopic[]> {
  if (gaps.length === 0 || questions.length === 0) return []
  const groups = await groupQuestions(questions.map((q) => q.question))
  const { vectors } = tfidf(groups)
  const byGap = new Map<number, number[]>()
  groups.forEach((_, g) => {
    const v = Object.fromEntries(vectors[g]!)
    let best = -1
    let bestCos = minCosine
    gaps.forEach((gap, i) => {
      const c = termsCosine(v, gap.terms)
      if (c >= bestCos) [best, bestCos] = [i, c]
    })
    if (best >= 0) byGap.set(best, [...(byGap.get(best) ?? []), g])
  })
  const topics: ScopedTopic[] = []
  for (const [i, gs] of byGap) {
    const gap = gaps[i]!
    const bySize = [...gs].sort((a, b) => groups[b]!.members.length - groups[a]!.members.length)
    const members = gs.flatMap((g) => groups[g]!.members.map((m) => questions[m]!))
    const newest = members.reduce<LoggedQuestion | null>((m, q) => (!m || q.created_at > m.created_at ? q : m), null)
    topics.push({
      gap_id: gap.id,
      source: gap.source,
      label: groups[bySize[0]!]!.text.slice(0, 200),
      classification: gap.classification,
      question_count: members.length,
      last_question_at: newest?.created_at ?? null,
      examples: bySize.slice(0, 5).map((g) => {
        const text = groups[g]!.text
        const asked = members.filter((q) => q.question.replace(/\s+/g, ' ').trim() === text && q.session_id)
        return { question: text, session_id: asked[0]?.session_id ?? null }
      }),
    })
  }
  return topics.sort((a, b) => b.question_count - a.question_count || (a.gap_id < b.gap_id ? -1 : 1)).slice(0, limit)
}
