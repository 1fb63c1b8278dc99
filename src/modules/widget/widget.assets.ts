import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { loadOnce, newestMtime, projectRoot } from '../../lib/static-bundle.js'

/**
 * The browser code: `embed.js` (the tiny loader a tenant pastes) and `widget.js` (the UI). Both are built
 * from widget/src with esbuild.
 *
 * Serving choice: the service serves dist/widget/* when that build is present and not older than the
 * source (what `npm run build:widget` writes, and what a production image ships). When it is missing or
 * stale and esbuild is installed (development, tests), the bundles are built once in memory on first use;
 * so a fresh clone works without a build step, and an edited source is never served stale.
 */
const ROOT = projectRoot(import.meta.url)
export const WIDGET_SRC_DIR = join(ROOT, 'widget/src')
export const WIDGET_DIST_DIR = join(ROOT, 'dist/widget')

/** Filled in by the service when it serves the loader; left as is in a static build (see embed.ts). */
export const API_BASE_PLACEHOLDER = '__SCB_API_BASE__'
export const WIDGET_URL_PLACEHOLDER = '__SCB_WIDGET_URL__'

export interface BundleSources {
  embed: string
  widget: string
  from: 'dist' | 'memory'
}

export interface Asset {
  body: Buffer
  gzip: Buffer
  etag: string
}

export function asset(code: string): Asset {
  const body = Buffer.from(code, 'utf8')
  return { body, gzip: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` }
}

/** Builds both bundles with esbuild, in memory. */
export async function buildBundles(): Promise<{ embed: string; widget: string }> {
  const esbuild = await import('esbuild')
  const build = async (entry: string) => {
    const out = await esbuild.build({
      entryPoints: [join(WIDGET_SRC_DIR, entry)],
      bundle: true,
      minify: true,
      format: 'iife',
      // Browsers of the last few years; nothing here needs newer syntax.
      target: ['es2020', 'chrome90', 'firefox90', 'safari15'],
      write: false,
      legalComments: 'none',
      charset: 'utf8',
      logLevel: 'silent',
    })
    return out.outputFiles[0]!.text
  }
  const [embed, widget] = await Promise.all([build('embed.ts'), build('main.ts')])
  return { embed, widget }
}

async function load(): Promise<BundleSources> {
  const embedFile = join(WIDGET_DIST_DIR, 'embed.js')
  const widgetFile = join(WIDGET_DIST_DIR, 'widget.js')
  const hasDist = existsSync(embedFile) && existsSync(widgetFile)
  const hasSrc = existsSync(WIDGET_SRC_DIR)
  if (hasDist && (!hasSrc || Math.min(statSync(embedFile).mtimeMs, statSync(widgetFile).mtimeMs) >= newestMtime(WIDGET_SRC_DIR))) {
    return { embed: readFileSync(embedFile, 'utf8'), widget: readFileSync(widgetFile, 'utf8'), from: 'dist' }
  }
  try {
    return { ...(await buildBundles()), from: 'memory' }
  } catch (err) {
    if (hasDist) return { embed: readFileSync(embedFile, 'utf8'), widget: readFileSync(widgetFile, 'utf8'), from: 'dist' }
    throw new Error(`widget bundles unavailable: run "npm run build:widget" (${(err as Error).message})`)
  }
}

/** The bundles, loaded or built once per process; a failed attempt is retried on the next call. */
export const widgetBundles = loadOnce(load)

/** The loader with this service's addresses filled in (an empty value lets the loader use its own origin). */
export function renderLoader(embed: string, values: { apiBase: string; widgetUrl: string }): string {
  return embed.split(API_BASE_PLACEHOLDER).join(values.apiBase).split(WIDGET_URL_PLACEHOLDER).join(values.widgetUrl)
}
