import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { withoutPleasantries } from './fakes/fake-demo.js'
import { demoAnswer, demoRelevant, demoReply, knowledgeTerms, NOT_IN_SOURCES } from './fakes/fake-llm.js'

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

describe('the demo model behaves like the model it stands for (issue 52, item 11)', () => {
  const mail = 'Hi,\n\nwhich file types can I upload?\n\nThanks,\nJane'
  it('reads a mail past its greeting and sign-off: relevant, and answered with its fact', () => {
    expect(demoRelevant(withoutPleasantries(mail), knowledge)).toBe(true)
    expect(withoutPleasantries(mail)).toBe('which file types can I upload?')
    const a = demoReply([
      { role: 'system', content: system },
      { role: 'user', content: mail },
    ])
    expect(a).toMatch(/PDF, Markdown/)
    expect(a).toMatch(/\[\d+\]$/)
    // a greeting that runs on into the question keeps the question
    expect(withoutPleasantries('Hello, which file types can I upload?')).toBe('Hello, which file types can I upload?')
  })

  it("writes the summary's three labelled lines", () => {
    const summary = demoReply([
      {
        role: 'system',
        content: 'You summarise a support conversation for the agent who takes it over from the bot.\nWrite three short lines, each starting with its label:',
      },
      {
        role: 'user',
        content:
          "Question at hand-off: Which file types can I upload?\nVisitor's note: My invoice shows the wrong company name\n\n=== Conversation ===\nVisitor: Which file types can I upload?\nDemo help bot: PDF, Markdown and plain text [1]\n=== End of conversation ===",
      },
    ])
    const lines = summary.split('\n')
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatch(/^Wants: Which file types can I upload\?$/)
    expect(lines[1]).toMatch(/^Bot said: PDF, Markdown/)
    expect(lines[2]).toBe('Open: My invoice shows the wrong company name')
  })

  it("drafts an agent's reply from the sources for what the visitor last asked", () => {
    const draft = demoReply([
      {
        role: 'system',
        content: `You draft the next reply of a support agent of Demo help bot to a visitor.\n=== Sources ===\n${system}\n=== End of sources ===`,
      },
      {
        role: 'user',
        content: "=== Conversation ===\nVisitor: Hi\nVisitor: Can I use the widget on localhost?\n=== End of conversation ===\n\nWrite the agent's next reply.",
      },
    ])
    expect(draft).toMatch(/allow localhost/)
    expect(draft).toMatch(/\[\d+\]$/)
    const honest = demoReply([
      {
        role: 'system',
        content: `You draft the next reply of a support agent of Demo help bot to a visitor.\n=== Sources ===\n${system}\n=== End of sources ===`,
      },
      { role: 'user', content: "=== Conversation ===\nVisitor: What is the best pizza topping?\n=== End of conversation ===\n\nWrite the agent's next reply." },
    ])
    expect(honest).toMatch(/checking this for you/)
  })
})
