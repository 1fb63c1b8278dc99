import { describe, expect, it } from 'vitest'
import { generalRank, topicality } from './general-words.js'
import { detectLanguage } from '../shared/language.js'
import { chunkLanguage, contentTerms, cosineFor, coverage, foldText, lexemeMatcher, relevance, termWeight } from './relevance.fns.js'

const REFUNDS = { title: 'Refunds', text: 'Refunds are accepted within 30 days. Support answers refund questions by e-mail.', vector: null }
const SHIPPING = { title: 'Shipping', text: 'Standard shipping to Germany takes 3 to 4 working days.', vector: null }

describe('relevance floor', () => {
  it('weighs an unknown word as the rarest known one, and a common word little', () => {
    expect(termWeight(0, 100)).toBe(termWeight(1, 100))
    expect(termWeight(90, 100)).toBeLessThan(termWeight(5, 100))
  })

  it('matches stemmed lexemes as word prefixes, y -> i included, without diacritics', () => {
    expect(lexemeMatcher('telemetri').test('xylophone telemetry')).toBe(true)
    expect(lexemeMatcher('refund').test('refunds are')).toBe(true)
    expect(lexemeMatcher('fund').test('refunds are')).toBe(false)
    expect(lexemeMatcher('uberweis').test(foldText('Die Überweisung'))).toBe(true)
    const terms = [
      { re: lexemeMatcher('refund'), w: 1 },
      { re: lexemeMatcher('xylophon'), w: 3 },
    ]
    expect(coverage('refunds', terms)).toBe(0.25)
  })

  it("groups one word's lexemes from several configurations and drops function words and stray lexemes", () => {
    const terms = contentTerms('How many people work at DuckDuckGo?', [
      { term: 'how', df: 6 },
      { term: 'peopl', df: 31 },
      { term: 'people', df: 0 },
      { term: 'work', df: 72 },
      { term: 'wor', df: 0 },
      { term: 'duckduckgo', df: 411 },
      { term: 'duckduckg', df: 8 },
      { term: 'dos', df: 0 },
    ])
    // "work" is phrasing like "how many"
    expect(terms).toEqual([
      { term: 'peopl', df: 31, word: 'people' },
      { term: 'duckduckgo', df: 411, word: 'duckduckgo' },
    ])
  })

  it('refuses the quantum flux question on a refund page, passes a covered one, and lets a close FAQ or a configured cosine through', () => {
    const q = 'Does the quantum flux capacitor support xylophone telemetry?'
    const qTerms = ['quantum', 'flux', 'capacitor', 'support', 'xylophon', 'telemetri'].map((term) => ({ term, df: term === 'support' ? 1 : 0 }))
    const p = { lexical: 0.75, cosine: null }
    const off = relevance(q, qTerms, 2, [REFUNDS, SHIPPING], p)
    expect(off.terms).toBe(6)
    // "support" is the only word found, and an everyday word weighs less than a topical one
    expect(off.lexical).toBeLessThan(1 / 6)
    expect(off.lexical).toBeGreaterThan(0)
    expect(off.grounded).toBe(false)
    const on = relevance(
      'How long do refunds take?',
      [
        { term: 'long', df: 0 },
        { term: 'refund', df: 1 },
        { term: 'take', df: 1 },
      ],
      2,
      [SHIPPING, REFUNDS],
      p,
    )
    // "how long ... take" is phrasing, not subject: the refund page covers the question
    expect(on).toMatchObject({ terms: 1, lexical: 1, grounded: true })
    expect(
      relevance(
        'Are refunds accepted?',
        [
          { term: 'refund', df: 1 },
          { term: 'accept', df: 1 },
        ],
        2,
        [SHIPPING, REFUNDS],
        p,
      ).grounded,
    ).toBe(true)
    // a vector counts only with a threshold for the model
    const vec = [{ ...REFUNDS, vector: 0.7 }]
    expect(relevance(q, qTerms, 2, vec, p).grounded).toBe(false)
    expect(relevance(q, qTerms, 2, vec, { ...p, cosine: 0.65 }).grounded).toBe(true)
    // an approved FAQ close enough, with no documents at all
    const faq = { title: 'Refunds?', text: 'Q: Refunds?\nA: 30 days.', vector: null, kind: 'faq' as const, confidence: 0.8 }
    expect(relevance('refunds', [], 0, [faq], { ...p, faq: 0.5 }).grounded).toBe(true)
    expect(relevance('refunds', [], 0, [{ ...faq, confidence: 0.3 }], { ...p, faq: 0.5 }).grounded).toBe(false)
    // nothing but function words: no evidence
    expect(relevance('How do I?', [{ term: 'how', df: 3 }], 2, [REFUNDS], p)).toMatchObject({ terms: 0, grounded: false })
  })

  it('rests a question in another language on the words it shares with the knowledge, and asks how often as phrasing', () => {
    const p = { lexical: 0.75, cosine: null }
    const de = 'Wie lange dauert der Versand nach Deutschland (shipping Germany)?'
    const deTerms = ['lang', 'dauert', 'versand', 'deutschland', 'shipping', 'germany'].map((term) => ({
      term,
      df: ['shipping', 'germany'].includes(term) ? 1 : 0,
    }))
    expect(relevance(de, deTerms, 2, [SHIPPING, REFUNDS], p)).toMatchObject({ terms: 2, grounded: true })
    // a German question sharing nothing with the English pages stays below the floor
    const none = 'Wie funktioniert der Quantenfluss bei euch?'
    expect(
      relevance(
        none,
        ['funktioniert', 'quantenfluss', 'euch'].map((term) => ({ term, df: 0 })),
        2,
        [SHIPPING],
        p,
      ).grounded,
    ).toBe(false)
    // the same unknown words in a question of the knowledge's own language still count against it
    const en = 'Does shipping to Germany need a quantum flux capacitor and xylophone telemetry?'
    const enTerms = ['shipping', 'germany', 'quantum', 'flux', 'capacitor', 'xylophon', 'telemetri'].map((term) => ({
      term,
      df: ['shipping', 'germany'].includes(term) ? 1 : 0,
    }))
    expect(relevance(en, enTerms, 2, [SHIPPING], p).grounded).toBe(false)
    const often = relevance(
      'How often does shipping to Germany leave?',
      ['often', 'shipping', 'germany', 'leav'].map((term) => ({ term, df: term === 'often' || term === 'leav' ? 0 : 1 })),
      2,
      [SHIPPING],
      p,
    )
    expect(often.terms).toBe(3)
  })

  it("weighs everyday words less than topical ones, in the question's language", () => {
    expect(generalRank('the', 'en')).toBe(1)
    expect(generalRank('telemetry', 'en')).toBeNull()
    expect(topicality('the', 'en')).toBe(0.5)
    expect(topicality('mistake', 'en')).toBeLessThan(1)
    expect(topicality('mistake', 'en')).toBeGreaterThan(topicality('turn', 'en'))
    expect(topicality('capacitor', 'en')).toBe(1)
    expect(topicality('xylophone', 'en')).toBe(1)
    expect(topicality('Geld', 'de')).toBe(0.5)
    expect(topicality('Lieferung', 'de')).toBeLessThan(1)
    // a language without a list: no discount
    expect(topicality('the', 'xx')).toBe(1)
    // an everyday word the page does not use ("stop") weighs less than a topical one it does not use
    const page = {
      title: 'VPN troubleshooting',
      text: 'While the VPN is reconnecting, your internet traffic is paused so that nothing leaves unprotected.',
      vector: null,
    }
    const df: Record<string, number> = { internet: 45, stop: 21, vpn: 63, reconnect: 3, hyperdriv: 0 }
    const ask = (q: string, words: string[]) =>
      relevance(
        q,
        words.map((term) => ({ term, df: df[term]! })),
        521,
        [page],
        { lexical: 0.75, cosine: null },
      )
    expect(ask('Why does my internet stop working when the VPN is reconnecting?', ['internet', 'stop', 'vpn', 'reconnect']).grounded).toBe(true)
    expect(ask('Why does my internet hyperdrive fail when the VPN is reconnecting?', ['internet', 'hyperdriv', 'vpn', 'reconnect']).grounded).toBe(false)
  })

  it('stops only the clearly unrelated at the default: one content word of the question in a top chunk is enough', () => {
    const page = { title: 'Refunds', text: 'Refunds are accepted within 30 days of purchase when the item is unused.', vector: null }
    const ask = (q: string, terms: [string, number][]) =>
      relevance(
        q,
        terms.map(([term, df]) => ({ term, df })),
        400,
        [page],
        { lexical: 0, cosine: null },
      )
    expect(
      ask('How many days do I have to ask for a refund?', [
        ['day', 3],
        ['ask', 2],
        ['refund', 4],
      ]).grounded,
    ).toBe(true)
    expect(
      ask('Can I return an unused item?', [
        ['return', 2],
        ['unus', 1],
        ['item', 5],
      ]).grounded,
    ).toBe(true)
    // words the knowledge never uses, or question phrasing ("how long does it take"), are no evidence
    expect(
      ask('quantum flux capacitor telemetry', [
        ['quantum', 0],
        ['flux', 0],
        ['capacitor', 0],
        ['telemetri', 0],
      ]).grounded,
    ).toBe(false)
    const r = ask('how long does it take?', [])
    expect(r.topical).toBe(0)
    expect(r.grounded).toBe(false)
  })

  it('reads per-model cosine thresholds', () => {
    expect(cosineFor('text-embedding-3-small=0.35, my/model=0.6', 'my/model')).toBe(0.6)
    expect(cosineFor('text-embedding-3-small=0.35', 'other')).toBeUndefined()
    expect(cosineFor('', 'x')).toBeUndefined()
    expect(cosineFor('x=abc', 'x')).toBeNull()
    // models of a known scale have a default, which the setting overrides or switches off
    expect(cosineFor('', 'text-embedding-3-small')).toBe(0.3)
    expect(cosineFor('', 'openai/text-embedding-3-large')).toBe(0.3)
    expect(cosineFor('', 'text-embedding-ada-002')).toBe(0.8)
    expect(cosineFor('text-embedding-3-small=0.45', 'text-embedding-3-small')).toBe(0.45)
    expect(cosineFor('text-embedding-3-small=none', 'text-embedding-3-small')).toBeNull()
    // another model's floor is measured (floor-probes.ts)
    expect(cosineFor('', 'nomic-embed-text')).toBeUndefined()
  })
})

describe('chunkLanguage', () => {
  it('is detectLanguage of the first 1,500 characters, asked again from its memo', () => {
    const de = 'Die Lieferung dauert drei bis vier Werktage und kostet innerhalb Deutschlands nichts. '
    const en = 'Standard shipping takes three to four working days and is free within the country. '
    for (const text of [de, en, en.repeat(40) + de.repeat(40), '42', '']) {
      expect(chunkLanguage(text)).toBe(detectLanguage(text.slice(0, 1500)))
      expect(chunkLanguage(text)).toBe(detectLanguage(text.slice(0, 1500)))
    }
    expect(chunkLanguage(de)).toBe('de')
  })
})
