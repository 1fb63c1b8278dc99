/**
 * The words support questions use for software actions, and the words help pages use for the same ones: a
 * visitor asks how to "turn on" what the page says to "enable", to "get rid of" what it says to "remove", to
 * "sign in" where it says "log in". A question holding one of these phrases is also searched with the others of
 * its group, at ALT_WEIGHT of a question word's weight (retrieval.service.ts), so a page in the other wording is
 * found without outranking one in the visitor's own. The groups are the common verbs of software interfaces,
 * written from general knowledge of product documentation, not from any question set; English only.
 */

const GROUPS: string[][] = [
  ['turn on', 'switch on', 'enable', 'activate'],
  ['turn off', 'switch off', 'disable', 'deactivate'],
  ['log in', 'sign in', 'login', 'signin', 'log on'],
  ['log out', 'sign out', 'logout', 'signout'],
  ['sign up', 'register', 'signup', 'create an account'],
  ['remove', 'delete', 'get rid of', 'erase'],
  ['change', 'edit', 'modify', 'update'],
  ['set up', 'setup', 'configure'],
  ['show', 'display', 'view'],
]

/** A search term from the groups weighs this much of a question word. */
export const ALT_WEIGHT = 0.5

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const MATCHERS = GROUPS.map((g) => ({
  group: g,
  re: new RegExp(`(?<![\\p{L}\\p{N}])(?:${g.map((p) => literal(p).replace(/ /g, '\\s+')).join('|')})(?![\\p{L}\\p{N}])`, 'iu'),
}))

/** The other wordings of the interface actions a question names, as one text to search with (empty: none). */
export function uiAlternates(question: string): string {
  if (question.length > 2000) return ''
  const out: string[] = []
  for (const { group, re } of MATCHERS) {
    const m = re.exec(question)
    if (!m) continue
    const said = m[0].toLowerCase().replace(/\s+/g, ' ')
    for (const p of group) if (p !== said && !out.includes(p)) out.push(p)
  }
  return out.join(' ')
}
