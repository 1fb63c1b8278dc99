import { mountWidget, type WidgetOptions } from './ui.js'

/**
 * The UI bundle's entry. The loader (embed.ts) has put `window.SupportChat` in place with the embed
 * options and a queue of calls made before this bundle arrived; mount, swap the queued API for the real
 * one, and replay the queue.
 */
interface LoaderApi {
  _o?: WidgetOptions
  _q?: [string, unknown[]][]
  _m?: boolean
  [method: string]: unknown
}

const w = window as unknown as { SupportChat?: LoaderApi }
const api = w.SupportChat
if (api && api._o && !api._m) {
  api._m = true
  const instance = mountWidget(api._o)
  api.open = () => instance.open()
  api.close = () => instance.close()
  api.identify = (token: unknown) => instance.identify(typeof token === 'string' ? token : null)
  api.destroy = () => {
    instance.destroy()
    if (w.SupportChat === api) delete w.SupportChat
  }
  for (const [method, args] of api._q ?? []) (api[method] as (...a: unknown[]) => void)?.(...args)
  api._q = []
}
