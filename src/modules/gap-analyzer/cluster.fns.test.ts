import { describe, expect, it } from 'vitest'
import { normalizeDense } from '../knowledge/text.fns.js'
import {
  classify,
  clusterCoverage,
  clusterGroups,
  clusterKey,
  clusterTerms,
  groupQuestions,
  matchExisting,
  questionSignal,
  tfidf,
  topicMatches,
} from './cluster.fns.js'
import { heuristicTopics, templateDraft, topicsFromReply } from './gaps.fns.js'

async function cluster(questions: string[], dense: number[][] | null = null) {
  const groups = await groupQuestions(questions)
  const { vectors, idf } = tfidf(groups)
  const weights = groups.map((g) => g.members.length)
  const d = dense ? groups.map((g) => normalizeDense(dense[g.members[0]!]!)) : null
  const clusters = await clusterGroups(vectors, weights, d, idf, { lexicalThreshold: 0.5, denseThreshold: 0.8, sliceMs: 0 })
  return { groups, clusters: clusters.map((c) => c.flatMap((g) => groups[g]!.members).sort((a, b) => a - b)), vectors, weights, raw: clusters }
}

describe('clustering', () => {
  it('puts paraphrases together and unrelated questions apart', async () => {
    const { clusters } = await cluster([
      'How do I cancel my subscription?',
      'how can I cancel the subscription',
      'Cancel subscription please',
      'What payment methods do you accept?',
      'Which payment methods are accepted?',
      'Where is my parcel?',
    ])
    expect(clusters).toEqual([[0, 1, 2], [3, 4], [5]])
  })

  it('joins paraphrases sharing no word when their vectors are close', async () => {
    const q = ['How do I cancel my subscription?', 'Stop my plan']
    expect((await cluster(q)).clusters).toHaveLength(2)
    expect(
      (
        await cluster(q, [
          [1, 0.1, 0],
          [0.95, 0.15, 0],
        ])
      ).clusters,
    ).toEqual([[0, 1]])
  })

  it('gives a cluster stable terms and key, and recognises it in the next run', async () => {
    const a = await cluster(['cancel subscription', 'cancel my subscription now', 'how to cancel subscription'])
    const t = clusterTerms(a.raw[0]!, a.vectors, a.weights)
    expect(clusterKey(t)).toContain('cancel')
    const next = { key: 'other key', terms: { cancel: 1, subscription: 0.9, refund: 0.2 } }
    expect(matchExisting([next], [{ id: 'g1', key: clusterKey(t), terms: t }]).get(0)).toBe('g1')
    expect(matchExisting([{ key: 'x', terms: { parcel: 1 } }], [{ id: 'g1', key: clusterKey(t), terms: t }]).size).toBe(0)
  })
})

describe('scores', () => {
  it('weighs escalations and thumbs-down more', () => {
    expect(questionSignal({ outcome: 'answered', feedback: 'none' })).toBe(1)
    expect(questionSignal({ outcome: 'escalated', feedback: 'none' })).toBe(3)
    expect(questionSignal({ outcome: 'answered', feedback: 'down' })).toBe(3)
    expect(questionSignal({ outcome: 'answered', feedback: 'up' })).toBe(0.5)
  })

  it('discounts coverage by bad outcomes', () => {
    expect(clusterCoverage(0.8, [{ outcome: 'answered', feedback: 'none' }])).toBe(0.8)
    expect(clusterCoverage(0.8, [{ outcome: 'escalated', feedback: 'none' }])).toBe(0.4)
    expect(clusterCoverage(0.8, [{ outcome: 'answered', feedback: 'down' }])).toBe(0.4)
    expect(classify(0.1, 0.35, 0.6)).toBe('uncovered')
    expect(classify(0.4, 0.35, 0.6)).toBe('partial')
    expect(classify(0.6, 0.35, 0.6)).toBe('covered')
  })

  it('links a visitor cluster to a documentation topic', () => {
    expect(topicMatches('Warranty claims', { warranty: 1, claim: 0.8, broken: 0.3 })).toBeGreaterThanOrEqual(0.6)
    expect(topicMatches('Warranty claims', { parcel: 1, late: 0.5 })).toBe(0)
  })
})

describe('topics and drafts', () => {
  it('finds recurring headings and phrases without a model', () => {
    const chunks = [
      { heading: 'Guide > Billing', text: 'Invoices are sent monthly. Payment methods include cards.' },
      { heading: 'FAQ > Billing', text: 'Payment methods: cards, SEPA.' },
      { heading: 'Setup', text: 'Payment methods can be changed.' },
    ]
    const t = heuristicTopics(chunks, 10)
    expect(t[0]).toBe('Billing')
    expect(t).toContain('payment methods')
  })

  it('reads topics from a model reply', () => {
    expect(topicsFromReply({ topics: ['Billing', 'billing', { name: 'Security' }, 1] }, 10)).toEqual(['Billing', 'Security'])
  })

  it('builds an article skeleton with the example questions', () => {
    const d = templateDraft({ source: 'mode_b', label: 'how do I get a refund?', coverage: 0.12, examples: ['refund please'], related: [] })
    expect(d.title).toBe('How do I get a refund?')
    expect(d.markdown).toMatch(/^# How do I get a refund\?/)
    expect(d.markdown).toContain('- refund please')
    expect(d.markdown).toContain('12%')
  })
})
