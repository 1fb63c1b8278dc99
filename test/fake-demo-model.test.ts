import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { demoAnswer, demoRelevant, knowledgeTerms, NOT_IN_SOURCES } from './fakes/fake-llm.js'

/**
 * The demo's bundled model (`npm run demo`, issue 37): its relevance guard judges from the help center it has
 * read, and its answer gives the sentences that answer. The help center's pages, as the prompt gives them: each
 * page one numbered source, its headings kept as markdown.
 */
const HELP = join(import.meta.dirname, '..', 'scripts', 'demo', 'help')
const pages = readdirSync(HELP)
  .filter((f) => f.endsWith('.html') && f !== 'index.html')
  .map((f) =>
    readFileSync(join(HELP, f), 'utf8')
      .replace(/<h[1-6][^>]*>/g, '\n## ')
      .replace(/<\/(?:h[1-6]|p|li)>/g, '\n')
      .replace(/<[^>]*>/g, ' ')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .split('\n')
      .map((l) => l.replace(/\s+/g, ' ').trim())
      .filter(Boolean)
      .join('\n'),
  )
const knowledge = knowledgeTerms(pages)
const system = `Answer from the sources; reply ${NOT_IN_SOURCES} when they do not hold the answer.\n${pages.map((p, i) => `[${i + 1}] ${p}`).join('\n')}`
const ask = (question: string) =>
  demoAnswer([
    { role: 'system', content: system },
    { role: 'user', content: question },
  ])

describe("the demo model's relevance guard", () => {
  it('reads a covered question as relevant and an off-topic one as not', () => {
    expect(demoRelevant('Where do I find the embed snippet?', knowledge)).toBe(true)
    expect(demoRelevant('What is the best pizza topping?', knowledge)).toBe(false)
    expect(demoRelevant('Who won the football world cup?', knowledge)).toBe(false)
    expect(demoRelevant('Can I use the widget on localhost?', knowledge)).toBe(true)
  })
})

describe("the demo model's answers", () => {
  it("answers each of the demo page's suggested questions with its key fact, citing a page", () => {
    const facts: [string, RegExp][] = [
      ['Which file types can I upload?', /PDF, Markdown/],
      ['How long does the old API key keep working after a rotation?', /24 hours/],
      ['When is an operator reply sent by e-mail?', /10 minutes/],
      ['Can I use the widget on localhost?', /allow localhost/],
      ['Where do I find the embed snippet?', /embed\.js/],
    ]
    for (const [q, fact] of facts) {
      const a = ask(q)
      expect(a, q).toMatch(fact)
      expect(a, q).toMatch(/\[\d+\]$/)
    }
  })

  it('gives the not-in-sources verdict for what the pages do not say', () => {
    expect(ask('What is the best pizza topping?')).toBe(NOT_IN_SOURCES)
  })
})
