import { AppError } from '../../lib/errors.js'
import { hostAllowed } from '../bots/bots.fns.js'
import { trimEndOf } from '../../lib/trim-run.fns.js'

export const MAX_MESSAGE_CHARS = 1000

/**
 * Whether a browser on `origin` may use a bot. A bot without allowed_domains is open to every page; with
 * some, only an http(s) origin whose host is one of them or a subdomain passes ("null" origins of
 * sandboxed frames and file pages do not).
 */
export function originAllowed(origin: string | undefined, allowedDomains: readonly string[]): boolean {
  if (!allowedDomains.length || origin === undefined) return true
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
  return hostAllowed(url.hostname, allowedDomains)
}

/**
 * The visitor's message, trimmed, or the contract's coded 422. Length counts Unicode code points, so an
 * emoji counts as one character as the visitor sees it.
 */
export function checkMessage(message: unknown): string {
  const text = typeof message === 'string' ? message.trim() : ''
  if (!text) throw new AppError(422, 'message_required', 'Message must not be empty', { coded: true })
  if ([...text].length > MAX_MESSAGE_CHARS) {
    throw new AppError(422, 'message_too_long', `Message is longer than ${MAX_MESSAGE_CHARS} characters`, {
      coded: true,
      extra: { max_chars: MAX_MESSAGE_CHARS },
    })
  }
  return text
}

/**
 * Where the loader fetches the UI bundle: WIDGET_LOADER_URL (a base, or a full .js address) when set, else
 * `widget.js` beside the loader on this service. `version` (the bundle's hash) busts caches on deploys.
 */
export function widgetBundleUrl(loaderUrl: string, version: string): string {
  const base = trimEndOf(loaderUrl.trim(), '/')
  const url = !base ? 'widget.js' : /\.m?js(\?.*)?$/i.test(base) ? base : `${base}/widget.js`
  return `${url}${url.includes('?') ? '&' : '?'}v=${encodeURIComponent(version)}`
}
