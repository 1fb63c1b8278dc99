import type { EventType } from '../shared/events.port.js'

/** Seconds before each retry after a failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then the delivery has failed. */
export const RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000] as const
/** An endpoint whose attempts have failed (with no success in between) for this long is disabled. */
export const FAILING_DISABLE_SECONDS = 5 * 24 * 3600
/** How long the secret before a rotation keeps signing beside the new one. */
export const PREVIOUS_SECRET_SECONDS = 24 * 3600
export const DELIVERY_TIMEOUT_MS = 10_000
export const RESPONSE_EXCERPT_CHARS = 500
export const RETENTION_DAYS = 30

/** When the next attempt runs after the failed attempt number `step` (0-based since the (re)send); null: no more. */
export function nextRetrySeconds(step: number): number | null {
  return RETRY_SCHEDULE_SECONDS[step] ?? null
}

export type AttemptVerdict = 'delivered' | 'gone' | 'retry'

/** Any 2xx is success, 410 Gone disables the endpoint, anything else (or no answer) is retried. */
export function judgeStatus(status: number | null): AttemptVerdict {
  if (status !== null && status >= 200 && status < 300) return 'delivered'
  if (status === 410) return 'gone'
  return 'retry'
}

/** The request body of an event, exactly as signed: `{type, timestamp, data}`. */
export function eventBody(type: EventType, at: Date, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: at.toISOString(), data })
}

/** A response's first characters for the delivery log, on one line, control characters dropped. */
export function excerpt(text: string, max = RESPONSE_EXCERPT_CHARS): string {
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '').trim()
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean
}

/** Why an endpoint URL cannot be used before any address is looked at; null when its shape is fine. */
export function endpointUrlProblem(raw: string): string | null {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    return 'Invalid URL'
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'The URL must start with https:// or http://'
  if (u.username || u.password) return 'The URL must not contain a user name or password'
  if (!u.hostname) return 'The URL has no host'
  return null
}

const SLACK_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' }
const slackText = (s: unknown, max = 500) => {
  const t = String(s ?? '').replace(/[&<>]/g, (c) => SLACK_ESCAPES[c]!)
  return t.length > max ? `${t.slice(0, max - 1)}…` : t
}

const TICKET_HEADLINE: Partial<Record<EventType, string>> = {
  'ticket.created': 'New ticket',
  'ticket.assigned': 'Ticket assigned',
  'ticket.replied': 'Reply sent on ticket',
  'ticket.resolved': 'Ticket resolved',
  'ticket.reopened': 'Ticket reopened',
}

const OTHER_HEADLINE: Partial<Record<EventType, string>> = {
  'conversation.ended': 'A conversation ended',
  'feedback.received': 'Feedback on an answer',
  'document.ready': 'Document ready',
  'document.failed': 'Document failed',
  'source.crawl_failed': 'Website crawl failed',
  'webhook.test': 'Test event from your support bot',
}

/**
 * Slack's incoming-webhook message for an event: for tickets the number, the (redacted) question, the
 * priority and a link to the ticket in the dashboard; a short line for the other events.
 */
export function slackMessage(type: EventType, data: Record<string, unknown>, dashboardUrl: string | null): { text: string; blocks: unknown[] } {
  const ticketHead = TICKET_HEADLINE[type]
  if (ticketHead) {
    const link = dashboardUrl && data.ticket_id ? `${dashboardUrl}/app/tickets/${data.ticket_id}` : null
    const title = `${ticketHead} ${slackText(data.ticket_number, 40)} (priority: ${slackText(data.priority, 20)})`
    const lines = [`*${title}*`, `> ${slackText(data.question, 1500)}`]
    if (data.reply) lines.push(`Reply: ${slackText(data.reply, 1500)}`)
    if (link) lines.push(`<${link}|Open the ticket>`)
    return { text: `${title}: ${slackText(data.question, 200)}`, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } }] }
  }
  const head = OTHER_HEADLINE[type] ?? type
  const detail = [data.title, data.url, data.error, data.feedback].filter((x) => typeof x === 'string' && x).map((x) => slackText(x, 300))
  const text = detail.length ? `${head}: ${detail.join(' — ')}` : head
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] }
}
