/** What every vendor's connector gives the sync: a listing in pages, and an article's text on demand. */
export type ConnectorKind = 'zendesk' | 'intercom' | 'freshdesk' | 'github'

export const CONNECTOR_KINDS: readonly ConnectorKind[] = ['zendesk', 'intercom', 'freshdesk', 'github']

/** A connector's stored settings (without its secret). */
export interface ConnectorSettings {
  base_url: string
  email?: string
  locales?: string[]
  repo?: string
  ref?: string | null
  path?: string | null
}

/** One article as the listing shows it. */
export interface ListedArticle {
  /** The page key of the source (source_pages.url): the article's public page, unique within the source. */
  key: string
  /** Its public page, cited in answers (null when the vendor gives none). */
  url: string | null
  title: string
  /** What changes when the article changes: its `updated_at`, or a file's blob `sha`. */
  version: string
  locale: string | null
  /** Why it must not be answered from (a draft, a restricted audience), or null when it is public. */
  hidden: 'draft' | 'restricted' | null
  /** The article's HTML when the listing carries it; undefined when `content` must fetch it. */
  html?: string | null
  /** A repository file's path, for `content`. */
  file?: string
}

export type ArticleText = { format: 'html' | 'markdown'; text: string; url?: string | null }

export interface Connector {
  /**
   * The listing, a page at a time. Ending normally means the listing is complete; any failure throws a
   * ConnectorError (a truncated tree after yielding what it holds), so the sync deletes nothing.
   */
  list(signal: AbortSignal): AsyncGenerator<ListedArticle[]>
  /** The article's text (for listings that do not carry it). */
  content(a: ListedArticle, signal: AbortSignal): Promise<ArticleText>
}

export type ConnectorFailure = 'refused' | 'not_found' | 'rate_limited' | 'upstream' | 'incomplete' | 'malformed' | 'too_large'

/** An upstream failure, with the words the workspace sees. `refused` and `not_found` end a sync `failed`. */
export class ConnectorError extends Error {
  override name = 'ConnectorError'
  constructor(
    readonly reason: ConnectorFailure,
    message: string,
  ) {
    super(message)
  }
}

export const TOKEN_REFUSED = 'the token was refused'
export const GITHUB_NOT_FOUND = 'repository or ref not found or not readable with this token'
