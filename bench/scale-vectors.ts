import { rng } from '../test/helpers/rng.js'

/**
 * bench:scale's page and question vectors (SCALE_VECTORS), both deterministic from fixed seeds.
 *
 * `iid` (sessions 22-24): 500 centres drawn in all 1,536 dimensions, a page = its centre + 0.7 x Gaussian noise in every
 * dimension, a question = its page + 0.3 x noise. Inside one centre the pages are noise of full intrinsic dimension:
 * every page of a centre is at nearly the same distance from a question (at 1M, about 2,000 pages a centre, the
 * neighbours 2 to 200 of a question within 0.287-0.308 of cosine distance, session 24), a dense shell with no gradient
 * for a graph index to follow: the known worst case of HNSW and of any nearest-neighbour graph, and unlike text
 * embeddings, which lie near a space of low intrinsic dimension (their neighbours' distances spread, so the graph's
 * greedy walk has somewhere to go). Published recall of pgvector's HNSW on 1M x 1,536 OpenAI embeddings (m 16,
 * ef_construction 256): 96.8 % at ef_search 40, 99.6 % at 200 (J. Katz; /work/shared/design/scale-notes.md); session
 * 24 measured 0.84 at ef_search 100 on `iid` at 1M.
 *
 * `latent` (default from session 25): pages drawn in a latent space of SCALE_LATENT_DIMS (32) dimensions with the topic
 * structure of a help centre (500 topics, 20 subtopics each; a page = topic + subtopic + its own offset), mapped to
 * 1,536 dimensions by one fixed random projection, plus a small isotropic noise in all 1,536 (a tenth of a
 * coordinate's spread, so the data is not exactly low-dimensional either). A question = its page's latent point plus
 * latent noise, projected the same way, plus its own small isotropic noise: what a rewording does to a real embedding
 * (it moves along the directions the model uses, not in every direction at once). Both kinds share no word with the
 * page's text, so only the vector side can find the page.
 */
export type VectorKind = 'iid' | 'latent'

export function vectorGenerators(kind: VectorKind, dims: number, rand: () => number, latentDims = 32) {
  const gauss = () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand())
  if (kind === 'iid') {
    /** Topics: pages cluster around 500 centres, as help centres' pages do around their products' areas. */
    const centres = Array.from({ length: 500 }, () => Float32Array.from({ length: dims }, gauss))
    return {
      page: (i: number) => Array.from(centres[i % centres.length]!, (x) => x + 0.7 * gauss()),
      question: (page: number[]) => page.map((x) => x + 0.3 * gauss()),
    }
  }
  // the structure and the projection from a seed of their own, so a later run (SCALE_REUSE) projects questions alike
  const own = rng(2551)
  const g = () => Math.sqrt(-2 * Math.log(own() + 1e-12)) * Math.cos(2 * Math.PI * own())
  const L = latentDims
  const TOPICS = 500
  const SUBTOPICS = 20
  const topics = Array.from({ length: TOPICS }, () => Float64Array.from({ length: L }, g))
  const subtopics = Array.from({ length: TOPICS * SUBTOPICS }, () => Float64Array.from({ length: L }, () => 0.5 * g()))
  /** dims x L, scaled so a coordinate's spread is the latent point's per-dimension spread */
  const projection = Float64Array.from({ length: dims * L }, () => g() / Math.sqrt(L))
  const NOISE = 0.1
  const project = (z: Float64Array) => {
    const out = new Array<number>(dims)
    for (let d = 0; d < dims; d++) {
      let s = 0
      const row = d * L
      for (let j = 0; j < L; j++) s += projection[row + j]! * z[j]!
      out[d] = s + NOISE * gauss()
    }
    return out
  }
  return {
    page: (i: number) => {
      const topic = i % TOPICS
      const sub = subtopics[topic * SUBTOPICS + Math.floor(rand() * SUBTOPICS)]!
      const t = topics[topic]!
      const z = new Float64Array(L)
      for (let j = 0; j < L; j++) z[j] = t[j]! + sub[j]! + 0.35 * gauss()
      return project(z)
    },
    /** the page's vector + the projection of a latent rewording (0.2 a dimension) + fresh isotropic noise */
    question: (page: number[]) => {
      const e = Float64Array.from({ length: L }, () => 0.2 * gauss())
      const moved = project(e)
      return page.map((x, d) => x + moved[d]!)
    },
  }
}
