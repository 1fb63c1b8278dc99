import { describe, expect, it } from 'vitest'
import type { PromptInput } from './07-prompt.js'
import { holdsLead } from './08-speculate.js'

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
  it('not when anything besides the sources differs (the caveat, the question)', () => {
    expect(holdsLead(prompt(['A', 'B']), prompt(['A', 'B'], { caveat: true }))).toBe(false)
    expect(holdsLead(prompt(['A', 'B']), prompt(['A', 'B'], { question: 'Do you ship abroad?' }))).toBe(false)
  })
  it('not when a source of the same title has other text', () => {
    const final = prompt(['A', 'B'])
    final.sources[0] = { ...final.sources[0]!, text: 'changed' }
    expect(holdsLead(prompt(['A', 'B']), final)).toBe(false)
  })
})
