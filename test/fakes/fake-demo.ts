import type { FakeMessage } from './fake-llm.js'

/**
 * The demo model's behaviour beyond answering a bare question (issue 52, item 11), as the model it stands for
 * behaves: it reads past a mail's greeting and sign-off ("Hi, … Thanks, Jane"), writes the summary's three
 * labelled lines, and drafts an agent's reply from the sources for what the visitor last asked.
 */

const GREETING = /^(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|hallo|guten (?:tag|morgen)|bonjour|hola|ciao)\b/i
const SIGN_OFF =
  /^(?:thanks|thank you|thx|many thanks|cheers|best|regards|kind regards|best regards|all the best|danke|vielen dank|viele grüße|mit freundlichen grüßen|merci|gracias)\b/i

/** The question a person wrote inside the pleasantries: the greeting line and the sign-off (with the name under it) taken off. */
export function withoutPleasantries(text: string): string {
  const lines = text.split('\n')
  // a greeting is a short line of its own ("Hi,", "Hello team,"); a greeting that runs on into the question keeps the question
  if (lines.length > 1 && GREETING.test(lines[0]!.trim()) && lines[0]!.trim().length <= 40) lines.shift()
  const end = lines.findIndex((l, i) => i > 0 && SIGN_OFF.test(l.trim()) && l.trim().length <= 60)
  const kept = (end > 0 ? lines.slice(0, end) : lines).join('\n').trim()
  return kept || text.trim()
}

/** The messages with the last user message read past its pleasantries. */
export function readPastPleasantries(messages: FakeMessage[]): FakeMessage[] {
  const i = messages.map((m) => m.role).lastIndexOf('user')
  if (i < 0) return messages
  const content = withoutPleasantries(messages[i]!.content)
  return content === messages[i]!.content ? messages : messages.map((m, j) => (j === i ? { ...m, content } : m))
}

const systemOf = (messages: FakeMessage[]) =>
  messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n')
const userOf = (messages: FakeMessage[]) => [...messages].reverse().find((m) => m.role === 'user')?.content ?? ''

/** A transcript's lines by speaker ("Visitor: …", "<bot>: …", "Support team: …"), continuation lines joined. */
function transcriptLines(text: string): { who: string; text: string }[] {
  const start = text.indexOf('=== Conversation ===')
  const stop = text.indexOf('=== End of conversation ===')
  const body = start >= 0 ? text.slice(start + '=== Conversation ==='.length, stop > start ? stop : undefined) : text
  const out: { who: string; text: string }[] = []
  for (const line of body.split('\n')) {
    if (line.startsWith('  ') && out.length) {
      out[out.length - 1]!.text += ` ${line.trim()}`
      continue
    }
    const colon = line.indexOf(': ')
    if (colon > 0 && colon <= 60) out.push({ who: line.slice(0, colon), text: line.slice(colon + 2).trim() })
  }
  return out
}

const oneSentence = (s: string, max = 160) => {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > max ? `${t.slice(0, max - 1).trimEnd()}…` : t
}

/** The summary for the agent taking over: "Wants:", "Bot said:", "Open:", one line each. */
export function demoSummary(messages: FakeMessage[]): string {
  const user = userOf(messages)
  const field = (label: string) => {
    const at = user.indexOf(`${label}: `)
    return at < 0
      ? ''
      : user
          .slice(at + label.length + 2)
          .split('\n')[0]!
          .trim()
  }
  const lines = transcriptLines(user)
  const question = field('Question at hand-off') || lines.find((l) => l.who === 'Visitor')?.text || ''
  const note = field("Visitor's note")
  // what the bot answered, not its hand-off line (which names the ticket: "… Your ticket number is ESC-0001.")
  const bot = lines.filter((l) => l.who !== 'Visitor' && l.who !== 'Support team' && !/\b[A-Z]{2,6}-\d{4,}\b/.test(l.text)).at(-1)
  const lastVisitor = lines.filter((l) => l.who === 'Visitor').at(-1)?.text
  return [
    `Wants: ${oneSentence(withoutPleasantries(question) || 'help from a person')}`,
    `Bot said: ${bot ? oneSentence(bot.text) : 'nothing yet'}`,
    `Open: ${oneSentence(note || lastVisitor || question || 'what the visitor needs')}`,
  ].join('\n')
}

/** A suggested agent reply: the sources' answer to what the visitor last asked, or an honest "I will check". */
export function demoSuggestion(messages: FakeMessage[], answer: (messages: FakeMessage[]) => string, idk: string): string {
  const lines = transcriptLines(userOf(messages)).filter((l) => l.who === 'Visitor')
  const asked = lines
    .slice(-2)
    .map((l) => withoutPleasantries(l.text))
    .join(' ')
  const reply = asked
    ? answer([
        { role: 'system', content: systemOf(messages) },
        { role: 'user', content: asked },
      ])
    : idk
  if (reply === idk || reply.startsWith('NOT_IN_SOURCES')) return 'Thanks for your patience. I am checking this for you and will get back to you here shortly.'
  return reply
}

/** Which of the assist prompts (src/modules/assist/assist.fns.ts) a chat request is, if any. */
export function assistTask(messages: FakeMessage[]): 'summary' | 'suggest' | null {
  const system = systemOf(messages)
  if (system.includes('Write three short lines')) return 'summary'
  if (system.includes('You draft the next reply of a support agent')) return 'suggest'
  return null
}
