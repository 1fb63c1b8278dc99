import { describe, expect, it } from 'vitest'
import { conversationStatus, knowledgeLine, ticketStatus } from '../dashboard/src/status-words.js'

describe('status words the dashboard shows (issue 37: they must not contradict each other)', () => {
  it('says a handed-off conversation waits for a person or is with one, never "Ended" while it is open', () => {
    expect(conversationStatus('queue')?.word).toBe('Waiting for a person')
    expect(conversationStatus('human', 'Anna')?.word).toBe('With Anna')
    expect(conversationStatus('human', null)?.word).toBe('With a person')
    expect(conversationStatus('closed')?.word).toBe('Ended')
    expect(conversationStatus('bot')).toBeNull()
  })

  it('says "In progress" only for a ticket someone took', () => {
    expect(ticketStatus({ status: 'in_progress', assignee_user_id: null, owner: 'queue' }).word).toBe('Open')
    expect(ticketStatus({ status: 'open', assignee_user_id: null, owner: 'queue' }).word).toBe('Open')
    expect(ticketStatus({ status: 'in_progress', assignee_user_id: 'u-1', owner: 'queue' }).word).toBe('In progress')
    expect(ticketStatus({ status: 'open', assignee_user_id: null, owner: 'human' }).word).toBe('In progress')
    expect(ticketStatus({ status: 'resolved', assignee_user_id: 'u-1', owner: 'bot' }).word).toBe('Resolved')
  })

  it('counts crawled website pages as knowledge on Get started, not "0 documents ready"', () => {
    expect(knowledgeLine(0, 7)).toBe('7 website pages ready to answer from.')
    expect(knowledgeLine(2, 1)).toBe('2 documents and 1 website page ready to answer from.')
    expect(knowledgeLine(1, 0)).toBe('1 document ready to answer from.')
    expect(knowledgeLine(0, 0)).toBe('Nothing is ready to answer from yet.')
  })
})
