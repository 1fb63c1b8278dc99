import { describe, expect, it } from 'vitest'
import { agentName, fillReply, insertReply, matchReplies, slashQuery, slugShortcut } from '../dashboard/src/ui/saved-replies.fns.js'

const R = (shortcut: string, title: string) => ({ id: shortcut, shortcut, title, content: `${title}.` })

describe('saved replies in the composer', () => {
  it('reads a / query only at the start or after whitespace, up to the caret', () => {
    expect(slashQuery('/ref', 4)).toEqual({ start: 0, query: 'ref' })
    expect(slashQuery('Hi /', 4)).toEqual({ start: 3, query: '' })
    expect(slashQuery('Hi\n/thanks', 10)).toEqual({ start: 3, query: 'thanks' })
    expect(slashQuery('see https://x.org/a', 19)).toBeNull()
    expect(slashQuery('and/or', 6)).toBeNull()
    expect(slashQuery('/ref done', 9)).toBeNull()
    expect(slashQuery('no slash', 8)).toBeNull()
    // the caret decides, not the end of the text
    expect(slashQuery('/ref tail', 4)).toEqual({ start: 0, query: 'ref' })
  })

  it('ranks shortcuts starting with the query first, then titles, then contained words', () => {
    const items = [R('thanks', 'Thank you'), R('refund-time', 'How long refunds take'), R('x-refund', 'Other'), R('hello', 'Greeting for refunds')]
    expect(matchReplies(items, 'ref').map((r) => r.shortcut)).toEqual(['refund-time', 'x-refund', 'hello'])
    expect(matchReplies(items, 'THANK').map((r) => r.shortcut)).toEqual(['thanks'])
    expect(matchReplies(items, 'zzz')).toEqual([])
    expect(matchReplies(items, '')).toHaveLength(4)
    expect(matchReplies(items, '', 2)).toHaveLength(2)
  })

  it('fills the three variables; an unknown value is empty; other braces stay', () => {
    const text = 'Hi {{visitor.name}}, {{ agent.name }} here about {{ticket.number}}. {{other}}'
    expect(fillReply(text, { 'visitor.name': 'Ada', 'agent.name': 'Kim', 'ticket.number': 'T-7' })).toBe('Hi Ada, Kim here about T-7. {{other}}')
    // an unknown value is left out with the spaces before it (issue 52, item 8)
    expect(fillReply(text, { 'visitor.name': null, 'agent.name': '  ' })).toBe('Hi, here about. {{other}}')
  })

  it('drops the empty part: "Hi {{visitor.name}}, this is {{agent.name}}" for an anonymous visitor reads "Hi, this is Kim"', () => {
    expect(fillReply('Hi {{visitor.name}}, this is {{agent.name}}', { 'visitor.name': null, 'agent.name': 'Kim' })).toBe('Hi, this is Kim')
    expect(fillReply('Hi {{visitor.name}}, this is {{agent.name}}', { 'visitor.name': 'Ada', 'agent.name': 'Kim' })).toBe('Hi Ada, this is Kim')
    // at the start of a line, the spaces after it go
    expect(fillReply('{{visitor.name}} thanks!\n{{ agent.name }} here', {})).toBe('thanks!\nhere')
  })

  it('slugs a shortcut as the service takes it: "Refund Time" is refund-time', () => {
    expect(slugShortcut('Refund Time')).toBe('refund-time')
    expect(slugShortcut('  Rückgabe / Umtausch!  ')).toBe('ruckgabe-umtausch')
    expect(slugShortcut('x'.repeat(40))).toBe('x'.repeat(32))
    expect(slugShortcut('already-ok-1')).toBe('already-ok-1')
    expect(slugShortcut('***')).toBe('')
  })

  it('replaces the /query with the reply and puts the caret after it', () => {
    expect(insertReply('Hi /ref tail', 3, 7, 'Five days.')).toEqual({ text: 'Hi Five days. tail', caret: 13 })
  })

  it("names the agent as visitors see them: the display name, else the bot's team", () => {
    expect(agentName(' Kim ', 'Helper')).toBe('Kim')
    expect(agentName(null, 'Helper')).toBe('Helper team')
    expect(agentName('', null)).toBeNull()
  })
})
