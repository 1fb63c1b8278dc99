import { Badge } from './kit'

const names = new Intl.DisplayNames(['en'], { type: 'language' })
const nameOf = (code: string) => {
  try {
    return names.of(code) ?? code
  } catch {
    return code
  }
}

/** The conversation's language (#40), small: its code, with the name for screen readers and on hover. */
export function LanguageBadge({ language }: { language: string | null | undefined }) {
  if (!language) return null
  return (
    <span className="language-badge" title={`Conversation language: ${nameOf(language)}`}>
      <Badge tone="info">
        <span aria-hidden="true">{language.toUpperCase()}</span>
        <span className="sr-only">Language: {nameOf(language)}</span>
      </Badge>
    </span>
  )
}
