import { setBounded } from '../../lib/bounded.js'
import type { CorpusRow } from './retrieval.repo.js'
import type { ModelWait } from './retrieval.types.js'

/**
 * The relevance floor's cosine for an embedding model whose scale is neither configured (RETRIEVAL_FLOOR_COSINE) nor
 * known (KNOWN_FLOOR_COSINES): measured on the tenant's own knowledge. Questions about things no support knowledge
 * is about (baking, football, the weather, ...) are embedded once per model, and each one's nearest chunk is
 * looked up: that is how close clearly unrelated questions come to this knowledge with this model. A visitor's
 * question that comes closer than they do is not clearly unrelated, and goes to the answer model, which judges it
 * with the text in view.
 *
 * The second highest of the probes' top cosines is taken, not the highest: a knowledge base may be about one of
 * the probes' subjects (a recipe site's help centre), and then that probe is no stranger to it. A margin of a tenth
 * of the way to 1 above it keeps a question that merely ties the probes out.
 */
export const OFF_TOPIC_PROBES: readonly string[] = [
  'How much flour goes into a loaf of bread?',
  "Who scored in last night's football match?",
  'Will it rain on the coast tomorrow?',
  'How far away is the Andromeda galaxy?',
  'How often should I water tomato seedlings?',
  "When was Beethoven's ninth symphony first performed?",
  'How does granite form underground?',
  'How do I knit a scarf as a beginner?',
]

/** Share of the distance to 1 added above the probes' second highest top cosine. */
export const PROBE_MARGIN = 0.1

/** The floor cosine from the probes' top cosines against the knowledge; null with too few to tell. */
export function floorFromProbes(topCosines: number[]): number | null {
  const tops = topCosines.filter((c) => Number.isFinite(c)).sort((a, b) => b - a)
  if (tops.length < Math.ceil(OFF_TOPIC_PROBES.length / 2)) return null
  const second = tops[1]!
  return Math.round((second + PROBE_MARGIN * (1 - second)) * 10000) / 10000
}

export interface ProbeDeps {
  /** The probes' vectors under the service's embedding model (one provider call). */
  embed: (apiKey: string, texts: string[], wait?: ModelWait) => Promise<number[][]>
  /** The top cosine of a vector among the tenant's chunks; null when it cannot be looked up. */
  nearest: (tenantId: string, corpus: CorpusRow, vector: number[]) => Promise<number | null>
}

/**
 * The floor cosine for a tenant at a corpus version, measured once (concurrent callers share it) and kept; the
 * probes' vectors are asked for once per process. A failed embedding is tried again by the next caller.
 */
export function createProbeFloors(deps: ProbeDeps, maxTenants = 10_000) {
  let vectors: Promise<number[][]> | null = null
  const floors = new Map<string, Promise<number | null>>()
  const measure = async (tenantId: string, corpus: CorpusRow, apiKey: string, wait?: ModelWait): Promise<number | null> => {
    vectors ??= deps.embed(apiKey, [...OFF_TOPIC_PROBES], wait)
    let vs: number[][]
    try {
      vs = await vectors
    } catch {
      vectors = null
      throw new Error('probe embedding failed')
    }
    const tops = await Promise.all(vs.map((v) => deps.nearest(tenantId, corpus, v)))
    return floorFromProbes(tops.filter((c): c is number => c !== null))
  }
  /** `wait` (the first caller's) is told while the probes' vectors are asked of the model. */
  return (tenantId: string, corpus: CorpusRow, apiKey: string, wait?: ModelWait): Promise<number | null> => {
    if (corpus.nEmbedded === 0) return Promise.resolve(null)
    const key = `${tenantId}:${corpus.version}`
    let p = floors.get(key)
    if (!p) {
      p = measure(tenantId, corpus, apiKey, wait).catch(() => {
        floors.delete(key)
        return null
      })
      setBounded(floors, key, p, maxTenants)
    }
    return p
  }
}
