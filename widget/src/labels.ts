/**
 * English texts used until /widget/config answers (the service sends the visitor's language). Kept equal
 * to the service's English set by test/widget-unit.test.ts.
 */
export const FALLBACK_LABELS = {
  link: { title: 'Open external link?', body: 'You are going to {hostname}. Continue?', continue_label: 'Open', cancel_label: 'Cancel' },
  ui: {
    open_chat: 'Open chat',
    close_chat: 'Close chat',
    greeting: 'Hi! How can I help you today?',
    placeholder: 'Type your question…',
    send: 'Send',
    thinking: 'Thinking…',
    searching: 'Searching the knowledge base…',
    writing: 'Writing…',
    sources: 'Sources',
    talk_to_human: 'Talk to a human',
    escalate_prompt: 'A member of our team will follow up. Anything they should know?',
    escalate_note_placeholder: 'Optional note',
    escalate_confirm: 'Request a human',
    cancel: 'Cancel',
    ticket_opened: 'Ticket {ticket} has been opened. Our team will get back to you.',
    chat_ended: 'This chat has ended.',
    new_chat: 'Start a new chat',
    error_generic: 'Something went wrong. Please try again.',
    error_rate_limited: 'You are sending messages a little too fast. Please wait a moment and try again.',
    error_offline: 'We cannot reach the chat service right now. Please check your connection and try again.',
    error_too_long: 'Your message is too long (at most {max} characters).',
    retry: 'Try again',
    you: 'You',
    assistant: 'Assistant',
    operator: 'Support team',
    powered_by: 'AI answers may contain mistakes.',
    team_online: 'Our team is online.',
    reply_eta: 'Usually replies in about {n} min',
    team_away: 'Our team is away right now.',
    team_back: 'Our team is away. Back {when} (your time).',
    offline_prompt: 'Nobody is here right now. Leave your e-mail and we will answer by mail.',
    email_label: 'Your e-mail',
    offline_note_label: 'Your message (optional)',
    offline_send: 'Send',
    offline_sent: 'Thank you! We will answer you at {email}.',
    email_invalid: 'Please enter a valid e-mail address.',
  },
}

export type UiLabels = typeof FALLBACK_LABELS.ui
export type LinkLabels = typeof FALLBACK_LABELS.link

export const fill = (template: string, values: Record<string, string | number>): string =>
  template.replace(/\{(\w+)\}/g, (m, k: string) => (k in values ? String(values[k]) : m))
