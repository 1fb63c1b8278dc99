/**
 * The words the dashboard uses for where a conversation or a ticket stands, in one place so that two screens never
 * contradict each other (issue 37: Conversations said "Ended" while the visitor waited for a person; tickets said
 * "In progress" before anyone took them, because only opening a ticket moved its status). Pure, no React: the
 * service's tests check them (test/status-words.test.ts).
 */

export type Tone = 'neutral' | 'ok' | 'warn' | 'bad' | 'info'
export type SessionOwner = 'bot' | 'queue' | 'human' | 'closed'

export interface StatusWord {
  word: string
  tone: Tone
}

/** A conversation in a list: nothing while the bot answers it; who has it once handed off; Ended only when closed. */
export function conversationStatus(owner: SessionOwner | string, assigneeName?: string | null): StatusWord | null {
  if (owner === 'queue') return { word: 'Waiting for a person', tone: 'warn' }
  if (owner === 'human') return { word: assigneeName ? `With ${assigneeName}` : 'With a person', tone: 'info' }
  if (owner === 'closed') return { word: 'Ended', tone: 'neutral' }
  return null
}

export interface TicketLike {
  status: string
  assignee_user_id?: string | null
  owner?: SessionOwner | string | null
}

/**
 * A ticket's status word: "In progress" only once someone took it (an assignee, or a person has the conversation);
 * an unresolved ticket nobody took is "Open", whatever its stored status says (the service marks a ticket
 * in_progress when an operator merely opens it).
 */
export function ticketStatus(t: TicketLike): StatusWord {
  if (t.status === 'resolved') return { word: 'Resolved', tone: 'ok' }
  const taken = !!t.assignee_user_id || t.owner === 'human'
  return taken ? { word: 'In progress', tone: 'info' } : { word: 'Open', tone: 'warn' }
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/**
 * What the knowledge the bot answers from holds, for the Get started checklist: uploaded documents ready and
 * crawled website pages indexed both count (a crawled help centre with no upload is not "0 documents").
 */
export function knowledgeLine(readyDocuments: number, indexedPages: number): string {
  const parts: string[] = []
  if (readyDocuments > 0) parts.push(plural(readyDocuments, 'document', 'documents'))
  if (indexedPages > 0) parts.push(plural(indexedPages, 'website page', 'website pages'))
  if (!parts.length) return 'Nothing is ready to answer from yet.'
  return `${parts.join(' and ')} ready to answer from.`
}
