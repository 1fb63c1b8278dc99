/**
 * Outbound events (webhooks) as other modules see them: `emit` writes the event into the outbox inside the
 * caller's transaction (`trx`), so an event exists exactly when its change committed. The webhooks module
 * provides the implementation; until it is wired, `noEvents` drops them.
 */
export const EVENT_TYPES = [
  'ticket.created',
  'ticket.assigned',
  'ticket.replied',
  'ticket.resolved',
  'ticket.reopened',
  'conversation.ended',
  'conversation.handed_off',
  'conversation.assigned',
  'conversation.returned_to_bot',
  'message.created',
  'feedback.received',
  'document.ready',
  'document.failed',
  'source.crawl_failed',
  'webhook.test',
  'action.called',
  'eval.run.completed',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

export interface OutboundEvent {
  type: EventType
  /** the bot the event belongs to, for endpoints limited to some bots (null: workspace-wide) */
  botId: string | null
  /** events of one ticket are delivered to an endpoint in the order they were emitted */
  ticketId?: string | null
  /** redacted text only, never an original */
  data: Record<string, unknown>
}

export interface EventsPort {
  emit(tenantId: string, event: OutboundEvent, trx?: unknown): Promise<void>
  /** Whether `emit` writes anything for the workspace (an endpoint takes events); absent: assume it does. */
  listens?(tenantId: string): Promise<boolean>
}

export const noEvents: EventsPort = {
  async emit() {},
  async listens() {
    return false
  },
}
