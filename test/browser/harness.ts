import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BrowserContext } from 'playwright-core'

/**
 * Real-browser plumbing for the widget tests: Debian's Chromium (never a downloaded browser) driven by
 * playwright-core, and a host page served on its own 127.0.0.1 port, so the widget runs cross-origin
 * exactly as on a tenant's site.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
/** Offline Chromium: no sandbox as root, no GPU, and none of the background connections a closed network refuses. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
export const hasChromium = existsSync(CHROMIUM)

export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const { chromium } = await import('playwright-core')
  const profile = mkdtempSync(join(tmpdir(), 'scb-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', ...CHROMIUM_ARGS],
    viewport: { width: 1280, height: 800 },
  })
  return {
    context,
    async close() {
      await context.close().catch(() => {})
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

/**
 * One browser whose contexts share nothing (cookies, storage), for tests with two people signed in side by
 * side: `context` is the first, `newContext()` opens another in the same Chromium process.
 */
export async function launchIsolatedBrowser(): Promise<{ context: BrowserContext; newContext(): Promise<BrowserContext>; close(): Promise<void> }> {
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  })
  const newContext = () => browser.newContext({ viewport: { width: 1280, height: 800 } })
  return {
    context: await newContext(),
    newContext,
    async close() {
      await browser.close().catch(() => {})
    },
  }
}

export interface HostPage {
  url: string
  /** The origin the page is served from, e.g. http://127.0.0.1:PORT */
  origin: string
  close(): Promise<void>
}

/** Serves `html(path)` on 127.0.0.1 (any path), a stand-in for the tenant's website. */
export async function serveHostPage(html: (path: string) => string, host = '127.0.0.1'): Promise<HostPage> {
  const server: Server = createServer((req, res) => {
    if (req.url === '/favicon.ico') {
      res.writeHead(204).end()
      return
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
    res.end(html(req.url ?? '/'))
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const port = (server.address() as { port: number }).port
  const origin = `http://${host}:${port}`
  return {
    url: `${origin}/`,
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

export function resultsDir(): string {
  const dir = join(process.cwd(), 'test-results')
  mkdirSync(dir, { recursive: true })
  return dir
}

/** A tenant-like page: some content and its own CSS that must not leak into the widget. */
export function hostPageHtml(opts: { embedSrc: string; botId: string; attrs?: Record<string, string>; body?: string; lang?: string }): string {
  const attrs = Object.entries(opts.attrs ?? {})
    .map(([k, v]) => ` ${k}="${v}"`)
    .join('')
  return `<!doctype html>
<html lang="${opts.lang ?? 'en'}">
<head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme Docs</title>
<style>
  body { font-family: Georgia, serif; margin: 0; background: #fafaf7; color: #333; }
  header { background: #1f2937; color: #fff; padding: 18px 32px; font-size: 20px; }
  main { max-width: 720px; margin: 32px auto; padding: 0 24px; line-height: 1.6; }
  /* Hostile page CSS: the widget lives in a shadow root and must look the same anyway. */
  button { background: hotpink !important; font-size: 30px !important; }
  div { border: 0; }
  p { color: #444; }
</style>
</head>
<body>
<header>Acme Cloud — Documentation</header>
<main>${opts.body ?? '<h1>Getting started</h1><p>Welcome to Acme Cloud. Use the chat in the corner if you have a question.</p>'}</main>
<script src="${opts.embedSrc}" data-bot-id="${opts.botId}"${attrs} async></script>
</body>
</html>`
}
