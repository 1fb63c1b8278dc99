import { cosineFor, relevance, type Relevance } from '../retrieval/relevance.fns.js'
import type { RetrievalResult } from '../retrieval/retrieval.service.js'
import type { GuardVerdict } from './stages/03-guards.js'
import { decide, type DecideInput, type Decision } from './stages/06-decide.js'
import { withTools } from './stages/08-tools.js'
import type { Turn, TurnDeps } from './turn.context.js'

/** Stage 6 of a turn (turn.ts): the relevance floor's reading of the evidence and the decision made on it. */

/**
 * The relevance floor's reading of one retrieval, computed once: the speculative answer decides on the same
 * evidence before the guards are in (the floor scans the six top chunks; about a third of a millisecond).
 */
const floors = new WeakMap<RetrievalResult, Relevance>()
/** The floor's cosine the configuration gives (cosineFor), read once per configuration rather than every turn. */
const configured = new WeakMap<TurnDeps['config'], number | null | undefined>()
function configuredCosine(config: TurnDeps['config']): number | null | undefined {
  if (!configured.has(config)) configured.set(config, cosineFor(config.RETRIEVAL_FLOOR_COSINE, config.EMBEDDING_MODEL))
  return configured.get(config)
}
export function floorOf(config: TurnDeps['config'], found: RetrievalResult): Relevance {
  let floor = floors.get(found)
  if (!floor) {
    // configured or known (a number, or null: the model's vectors switched off), else measured (measureFloor)
    const set = configuredCosine(config)
    floor = relevance(found.query, found.queryTerms, found.corpusChunks, found.hits, {
      lexical: config.RETRIEVAL_FLOOR_LEXICAL,
      cosine: set === undefined ? (found.floorCosine ?? null) : set,
      faq: config.FAQ_CONTEXT_SCORE,
    })
    floors.set(found, floor)
  }
  return floor
}

/**
 * An embedding model of unknown scale (cosineFor: undefined): when the question's words alone do not pass the
 * floor but its vectors were searched, the floor's cosine is measured on this knowledge (probeFloor, once per
 * corpus version), so a question in other words than the knowledge's can still pass on its vectors.
 */
export async function measureFloor(deps: Pick<TurnDeps, 'config' | 'retrieval'>, t: Turn, found: RetrievalResult): Promise<void> {
  const { config } = deps
  if (!found.vectorUsed || !found.corpus || !t.apiKey) return
  if (configuredCosine(config) !== undefined || floorOf(config, found).grounded) return
  found.floorCosine = await t.sw.time('floor_probes', () => deps.retrieval.probeFloor(t.tenantId, found.corpus!, t.apiKey!))
  floors.delete(found)
}

/** What stage 6 decides on, with the relevance floor's reading of the evidence (a pure function of it). */
export function decideInput(deps: Pick<TurnDeps, 'config'>, guard: DecideInput['guard'], found: RetrievalResult | null) {
  const { config } = deps
  const floor = found ? floorOf(config, found) : null
  const input: DecideInput = {
    guard,
    corpusChunks: found?.corpusChunks ?? 0,
    bestScore: found?.bestScore ?? 0,
    minScore: config.RETRIEVAL_MIN_SCORE,
    caveatScore: config.RETRIEVAL_CAVEAT_SCORE,
    grounded: floor?.grounded ?? false,
  }
  return { input, floor }
}

/** Stage 6. */
export function decideTurn(deps: Pick<TurnDeps, 'config'>, t: Turn, guard: GuardVerdict, found: RetrievalResult | null): Decision {
  const { input, floor } = decideInput(deps, guard, found)
  // with actions on offer, a question the knowledge does not cover still goes to the model (08-tools.ts)
  const decision = withTools(decide(input), t.tools)
  if (floor) {
    const measured = found?.floorCosine !== undefined ? { measured_cosine: found.floorCosine } : {}
    t.debug.floor = { lexical: Math.round(floor.lexical * 10000) / 10000, vector: floor.vector, terms: floor.terms, grounded: floor.grounded, ...measured }
  }
  t.debug.decision = decision
  return decision
}

export function directFaq(deps: Pick<TurnDeps, 'config'>, found: RetrievalResult) {
  const min = deps.config.FAQ_DIRECT_SCORE
  return found.hits.filter((h) => h.kind === 'faq' && h.confidence >= min && h.text.includes('\nA: ')).sort((x, y) => y.confidence - x.confidence)[0]
}
