import { describe, expect, it } from 'vitest'
import { renderStructured, parseYamlText } from '../documents/parsers/structured.fns.js'
import {
  dedupeFaqs,
  emailsInText,
  faqScore,
  headingQuestions,
  heuristicProfile,
  mergeExtracted,
  sanitizeFaqPairs,
  sanitizeProfile,
  swaggerFaqs,
} from './knowledge.fns.js'
import { stem, termKey, terms, termSimilarity } from './text.fns.js'
import { linearAgainstBaseline, ofLength } from '../../../test/helpers/linear-time.js'

describe('text', () => {
  it('reduces wordings to the same terms', () => {
    expect(termKey('How do I cancel my subscriptions?')).toBe(termKey('cancelling the subscription'))
    expect(stem('shipping')).toBe(stem('ship'))
    expect(terms('Wie kann ich mein Passwort ändern?')).toEqual(['passwort', 'ändern'])
    expect(termSimilarity('How do I reset my password?', 'how can I reset the password')).toBe(1)
    expect(termSimilarity('reset password', 'delete account')).toBe(0)
  })
})

describe('profile', () => {
  it('bounds a model reply and drops what is not valid', () => {
    const p = sanitizeProfile({
      product_name: '  Acme   Cloud ',
      topics: ['Billing', 'billing', { name: 'Refunds' }, 42, ''],
      glossary: [{ term: 'SLA', definition: 'Service level agreement' }, { nope: 1 }],
      support_email: 'Help@Acme.example',
      support_urls: ['https://acme.example/help', 'javascript:alert(1)', 'ftp://x.example', 'https://u:p@acme.example/'],
      extra: 'ignored',
    })
    expect(p).toEqual({
      product_name: 'Acme Cloud',
      topics: ['Billing', 'Refunds', '42'],
      glossary: [{ term: 'SLA', definition: 'Service level agreement' }],
      support_email: 'help@acme.example',
      support_urls: ['https://acme.example/help'],
    })
    expect(sanitizeProfile({ support_email: 'not an email' }).support_email).toBeNull()
  })

  it('never overwrites operator fields, and an empty extraction does not wipe earlier values', () => {
    const extracted = sanitizeProfile({ product_name: 'New', topics: ['A'], support_email: null })
    expect(mergeExtracted(extracted, ['product_name'])).toEqual({ topics: ['A'] })
  })

  it('finds the support address and pages without a model', () => {
    const p = heuristicProfile([
      {
        title: 'Guide',
        text: '# Billing\n\nWrite to support@acme.example or sales@acme.example.\n\nSee https://acme.example/help/billing.\n\n# Refunds\n\nText',
      },
      { title: 'Other', text: '# Billing\n\nMore.' },
    ])
    expect(p.support_email).toBe('support@acme.example')
    expect(p.support_urls).toEqual(['https://acme.example/help/billing'])
    expect(p.topics[0]).toBe('Billing')
  })
})

describe('FAQ drafts', () => {
  it('turns question headings into candidates with their section text', () => {
    const md =
      '# Guide\n\nIntro\n\n## How do I reset my password?\n\nOpen Settings and choose Reset password.\n\n### Details\n\nA mail arrives within minutes.\n\n## How to export data\n\nUse the Export button on the Data page.\n\n## Limits\n\nNone.\n\n```\n# Not a heading?\n```'
    const f = headingQuestions(md)
    expect(f.map((x) => x.question)).toEqual(['How do I reset my password?', 'How do I export data?'])
    expect(headingQuestions('## How to export data.:!\n\nUse the Export button on the Data page.').map((x) => x.question)).toEqual(['How do I export data?'])
    expect(f[0]!.answer).toContain('A mail arrives within minutes')
    expect(f[0]!.answer).not.toContain('Export button')
  })

  it('bounds model pairs and adds the question mark', () => {
    const f = sanitizeFaqPairs({ faqs: [{ question: 'What does it cost', answer: '10 EUR a month', confidence: 3 }, { question: 'x', answer: 'y' }, 'junk'] })
    expect(f).toEqual([{ question: 'What does it cost?', answer: '10 EUR a month', confidence: 1 }])
  })

  it('makes one candidate per operation of an OpenAPI document, without deprecated ones', () => {
    const spec = `openapi: 3.0.0
info: {title: Pets, version: '1'}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
security: [{key: []}]
paths:
  /pets:
    get:
      summary: List all pets
      parameters:
        - {name: limit, in: query, schema: {type: integer}, description: How many}
    post:
      operationId: createPet
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties: {name: {type: string}}
  /pets/{id}:
    delete:
      summary: Delete a pet
      deprecated: true
`
    const md = renderStructured(parseYamlText(spec), null).text
    const f = swaggerFaqs(md)
    expect(f.map((x) => x.question)).toEqual(['How do I list all pets?', 'How do I create pet?'])
    expect(f[0]!.answer).toContain('`GET /pets`')
    expect(f[0]!.answer).toContain('`limit`')
    expect(f[0]!.answer).toContain('Authentication: key')
    expect(f[1]!.answer).toContain('`name` (string, required)')
    expect(f[1]!.answer).toContain('application/json')
    expect(f[0]!.confidence).toBeGreaterThan(f[1]!.confidence)
  })

  it('drops near-duplicates of existing candidates and of each other', () => {
    const out = dedupeFaqs(
      [{ question: 'How can I reset the password?' }, { question: 'How do I delete my account?' }, { question: 'Deleting my account: how?' }],
      [termKey('How do I reset my password?')],
    )
    expect(out.map((o) => o.question)).toEqual(['How do I delete my account?'])
  })

  it('scores an FAQ against a query by shared content terms', () => {
    const q = new Set(terms('how do i reset my password'))
    expect(faqScore(q, 'How do I reset my password?')).toBe(1)
    expect(faqScore(q, 'How do I reset my password for the admin account?')).toBeLessThan(0.9)
    expect(faqScore(q, 'What does shipping cost?')).toBe(0)
  })
})

describe('deprecatedMarked', () => {
  it('says what /(^|·)\\s*Deprecated\\s*$/m says, and reads a run of line breaks once', async () => {
    const { deprecatedMarked } = await import('./knowledge.fns.js')
    let seed = 50
    const pick = (xs: string[]) => xs[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % xs.length]!
    for (let i = 0; i < 30_000; i++) {
      const s = Array.from({ length: seed % 7 }, () => pick(['Deprecated', '·', ' ', '\n', '\r', 'a', '\u2028'])).join('')
      expect(deprecatedMarked(s), JSON.stringify(s)).toBe(/(^|·)\s*Deprecated\s*$/m.test(s))
    }
    const t0 = performance.now()
    expect(deprecatedMarked(`${'\n'.repeat(200_000)}x`)).toBe(false)
    expect(performance.now() - t0).toBeLessThan(1000)
  })
})

describe('support e-mail addresses by a scan (issue 50)', () => {
  const PATTERN = /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}/g
  it('emailsInText finds what the pattern found', () => {
    let seed = 50
    const pick = (xs: string[]) => xs[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % xs.length]!
    const alphabet = ['@', '.', 'a', 'B', 'co', '1', '-', '_', '%', '+', ' ', '..', 'x'.repeat(30), 'y'.repeat(20), '@support.example.com']
    for (let i = 0; i < 80_000; i++) {
      const s = Array.from({ length: seed % 12 }, () => pick(alphabet)).join('')
      expect(emailsInText(s), JSON.stringify(s)).toEqual(s.match(PATTERN) ?? [])
    }
    expect(emailsInText('Write to help@acme.example.com. Or sales@acme.io')).toEqual(['help@acme.example.com', 'sales@acme.io'])
  })
  it('reads a document in linear time', () => {
    // a document's first 40,000 characters (DOC_TEXT_CHARS)
    const n = 40_000
    const ordinary = ofLength('Contact support@acme.example.com or see https://acme.example.com/help for details. ', n)
    linearAgainstBaseline(emailsInText, ofLength('%-', n), ordinary)
    linearAgainstBaseline(emailsInText, ofLength(`${'a'.repeat(64)}@`, n), ordinary)
    linearAgainstBaseline(emailsInText, ofLength('a@b.c0.d1.', n), ordinary)
  })
})
