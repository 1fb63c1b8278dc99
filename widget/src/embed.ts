/**
 * The loader a tenant pastes:
 *   <script src="https://service/embed.js" data-bot-id="ch_..." async></script>
 * Optional: data-position (right|left), data-color, data-locale, data-mode (bubble|inline) with
 * data-target (a CSS selector), data-api-base (only for a copy hosted elsewhere). It defines
 * window.SupportChat (open, close, identify(token), destroy), queueing calls until the UI bundle has
 * loaded, then loads that bundle. Kept tiny: it runs on every page of the tenant's site.
 */
;(() => {
  // Filled in by the service when it serves this file; left as is in a static build.
  const API_BASE = '__SCB_API_BASE__'
  const WIDGET_URL = '__SCB_WIDGET_URL__'
  const given = (v: string) => (v.indexOf('__SCB_') === 0 ? '' : v)

  const w = window as unknown as { SupportChat?: Record<string, unknown> }
  if (w.SupportChat) return // already embedded on this page
  const script = (document.currentScript || document.querySelector('script[data-bot-id]')) as HTMLScriptElement | null
  const data = script ? script.dataset : {}
  const botId = data.botId
  if (!script || !botId) {
    console.warn('[SupportChat] data-bot-id is missing on the embed script')
    return
  }
  const src = new URL(script.src, location.href)
  const apiBase = (given(API_BASE) || data.apiBase || src.origin).replace(/\/+$/, '')
  const queue: [string, unknown[]][] = []
  const api: Record<string, unknown> = {
    _o: { botId, apiBase, position: data.position, color: data.color, locale: data.locale, mode: data.mode, target: data.target },
    _q: queue,
  }
  for (const m of ['open', 'close', 'identify', 'destroy']) api[m] = (...args: unknown[]) => queue.push([m, args])
  w.SupportChat = api

  const ui = document.createElement('script')
  ui.async = true
  ui.src = new URL(given(WIDGET_URL) || 'widget.js', src).href
  ui.onerror = () => console.warn('[SupportChat] could not load the chat widget')
  document.head.appendChild(ui)
})()
