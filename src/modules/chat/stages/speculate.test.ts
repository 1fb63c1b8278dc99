import { describe, expect, it } from 'vitest'
import type { PromptInput } from './07-prompt.js'
import { holdsLead, restartReason, TRANSLATED_LEAD_SOURCES } from './08-speculate.js'

const src = (n: number, title: string) => ({ n, title, url: null, text: `${title} text` })
const prompt = (titles: string[], over: Partial<PromptInput> = {}): PromptInput => ({
  botName: 'Bot',
  agentInstructions: null,
  disclosure: 'standard',
  language: 'en',
  locale: null,
  sources: titles.map((t, i) => src(i + 1, t)),
  history: [],
  question: 'How long do refunds take?',
  caveat: false,
  ...over,
})

describe('holdsLead: an answer started from the lexical evidence serves the final prompt', () => {
  it('when its sources hold the final lead, in any order and with other sources beside', () => {
    expect(holdsLead(prompt(['A', 'B', 'C', 'D']), prompt(['C', 'A', 'B', 'E']))).toBe(true)
    expect(holdsLead(prompt(['A', 'B']), prompt(['B', 'A']))).toBe(true)
  })
  it('not when the vectors brought a new source into the lead', () => {
    expect(holdsLead(prompt(['A', 'B', 'C', 'D']), prompt(['E', 'A', 'B']))).toBe(false)
    expect(holdsLead(prompt(['B']), prompt(['A', 'B']))).toBe(false)
    // a longer lead asked for: the second source counts too
    expect(holdsLead(prompt(['A', 'B', 'C', 'D']), prompt(['A', 'E', 'B']), 3)).toBe(false)
    expect(holdsLead(prompt(['A']), prompt(['A', 'B']), 2)).toBe(false)
  })
  it('by default, when its sources hold the final first source, whatever the vectors added after it', () => {
    expect(holdsLead(prompt(['A', 'B', 'C', 'D']), prompt(['A', 'E', 'B']))).toBe(true)
    expect(holdsLead(prompt(['C', 'A']), prompt(['A', 'E', 'F']))).toBe(true)
  })
  it('not when anything besides the sources and the caveat differs (the question, the language)', () => {
    expect(holdsLead(prompt(['A', 'B']), prompt(['A', 'B'], { question: 'Do you ship abroad?' }))).toBe(false)
    expect(restartReason(prompt(['A', 'B']), prompt(['A', 'B'], { question: 'Do you ship abroad?' }))).toBe('prompt')
    expect(holdsLead(prompt(['A', 'B']), prompt(['A', 'B'], { language: 'de' }))).toBe(false)
  })
  it('whatever the caveat: each was decided on its own sources, and the sources decide', () => {
    // more careful than the final evidence asks
    expect(holdsLead(prompt(['A', 'B'], { caveat: true }), prompt(['A', 'C']))).toBe(true)
    // its sources matched well; the final caveat came from other passages packed in their place
    expect(holdsLead(prompt(['A', 'B']), prompt(['A', 'C'], { caveat: true }))).toBe(true)
    // the vectors brought another document into the lead: restarted all the same
    expect(restartReason(prompt(['A', 'B'], { caveat: true }), prompt(['C', 'A']))).toBe('lead')
  })
  it('before the translation landed (#40): the translated question is a reference line, the first three passages decide', () => {
    const tr = { translatedQuestion: 'How long do refunds take?' }
    expect(holdsLead(prompt(['A', 'B']), prompt(['A', 'C'], tr))).toBe(true)
    expect(holdsLead(prompt(['A', 'B']), prompt(['C', 'A'], tr))).toBe(false)
    // the evidence for the question as asked must hold the fused evidence's first three (or their siblings)
    expect(holdsLead(prompt(['C', 'A', 'B', 'D']), prompt(['A', 'B', 'C', 'E'], tr), TRANSLATED_LEAD_SOURCES)).toBe(true)
    expect(restartReason(prompt(['A', 'B', 'D']), prompt(['A', 'B', 'C'], tr), TRANSLATED_LEAD_SOURCES)).toBe('lead')
    const sibling = prompt(['A', 'B', 'C'], tr)
    sibling.sources[2] = { ...sibling.sources[2]!, text: 'another passage of C' }
    expect(holdsLead(prompt(['A', 'B', 'C']), sibling, TRANSLATED_LEAD_SOURCES)).toBe(true)
  })
  it('when the lead is the same passage given as its window under the prompt budget', () => {
    const early = prompt(['B', 'A'])
    early.sources[1] = { ...early.sources[1]!, text: '… A te' }
    expect(holdsLead(early, prompt(['A', 'B']))).toBe(true)
    expect(holdsLead(early, prompt(['A', 'C']))).toBe(true)
    // another passage of A's, and its own lead (B) gone from the final sources
    early.sources[1] = { ...early.sources[1]!, text: '… A other …' }
    expect(restartReason(early, prompt(['A', 'C']))).toBe('text')
  })
  it('when the final lead is another passage of a document it reads and its own lead is still among the sources', () => {
    const final = prompt(['A', 'B'])
    final.sources[0] = { ...final.sources[0]!, text: 'another passage of A' }
    // its own lead (A's first passage) is gone from the final sources: restarted
    expect(restartReason(prompt(['A', 'B']), final)).toBe('text')
    // its own lead (B) is still evidence, A's passage was swapped for a sibling: kept
    expect(holdsLead(prompt(['B', 'A']), final)).toBe(true)
    // the final lead's document is not among its sources at all: restarted
    expect(restartReason(prompt(['B', 'C']), final)).toBe('lead')
  })
})
