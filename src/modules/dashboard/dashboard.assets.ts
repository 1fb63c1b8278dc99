import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { gzipSync } from 'node:zlib'
import { loadOnce, newestMtime, projectRoot } from '../../lib/static-bundle.js'

/**
 * The operator dashboard's browser code (dashboard/src, React), bundled by esbuild into content-hashed
 * files plus one index.html. Like the widget: the service serves dist/dashboard when it is present and not
 * older than the source (what `npm run build` writes); otherwise, with esbuild installed (development,
 * tests), it builds once in memory on first use, so an edited source is never served stale.
 */
const ROOT = projectRoot(import.meta.url)
export const DASHBOARD_SRC_DIR = join(ROOT, 'dashboard/src')
export const DASHBOARD_DIST_DIR = join(ROOT, 'dist/dashboard')
/** Never written: esbuild needs an output folder to name files relative to. */
const OUT = join(ROOT, 'dist/dashboard-build')
/** Where the hashed files are served from; index.html refers to them by this prefix. */
export const ASSET_PREFIX = '/app/assets/'

export interface DashboardFile {
  body: Buffer
  gzip: Buffer
  etag: string
  type: string
}

export interface DashboardBundle {
  index: DashboardFile
  /** Hashed files by name (no prefix), e.g. `main-4F2K.js`, `chunks/bots-9QX.js`. */
  assets: Map<string, DashboardFile>
  /** JS + CSS the first screen loads (the entry and its static imports), gzipped bytes. */
  firstScreenGzip: number
  from: 'dist' | 'memory'
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
}

function file(name: string, body: Buffer): DashboardFile {
  const ext = /\.[a-z0-9]+$/.exec(name)?.[0] ?? ''
  return {
    body,
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    type: TYPES[ext] ?? 'application/octet-stream',
  }
}

function indexHtml(script: string, css: string[]): string {
  // No inline script or style: the page's CSP allows only same-origin scripts and styles.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>Support dashboard</title>
<link rel="icon" href="data:,">
${css.map((c) => `<link rel="stylesheet" href="${ASSET_PREFIX}${c}">`).join('\n')}
<script type="module" src="${ASSET_PREFIX}${script}"></script>
</head>
<body>
<div id="root"></div>
<noscript>The dashboard needs JavaScript.</noscript>
</body>
</html>
`
}

/** Bundles the dashboard in memory: hashed JS/CSS (code-split per screen) and the index page. */
export async function buildDashboard(): Promise<{ files: Map<string, Buffer>; index: string; firstScreen: string[] }> {
  const esbuild = await import('esbuild')
  const out = await esbuild.build({
    entryPoints: [join(DASHBOARD_SRC_DIR, 'main.tsx')],
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    sourcemap: false,
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    absWorkingDir: ROOT,
    outdir: OUT,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunks/[name]-[hash]',
    assetNames: 'assets/[name]-[hash]',
    define: { 'process.env.NODE_ENV': '"production"' },
    write: false,
    metafile: true,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  })
  const files = new Map<string, Buffer>()
  for (const f of out.outputFiles) files.set(relative(OUT, f.path), Buffer.from(f.contents))
  const outputs = out.metafile.outputs
  // Lazy screens are entry points too (dynamic imports); the page's entry is the one from main.tsx.
  const entry = Object.keys(outputs).find((k) => outputs[k]!.entryPoint?.endsWith('dashboard/src/main.tsx'))!
  // The first screen: the entry, its static imports (shared chunks), and the CSS they carry.
  const firstScreen = new Set<string>()
  const visit = (k: string) => {
    if (firstScreen.has(k)) return
    firstScreen.add(k)
    for (const imp of outputs[k]!.imports) if (imp.kind === 'import-statement' && outputs[imp.path]) visit(imp.path)
    const css = outputs[k]!.cssBundle
    if (css) firstScreen.add(css)
  }
  visit(entry)
  const rel = (k: string) => relative(OUT, join(ROOT, k))
  const css = [...firstScreen].filter((k) => k.endsWith('.css')).map(rel)
  return { files, index: indexHtml(rel(entry), css), firstScreen: [...firstScreen].map(rel) }
}

function toBundle(files: Map<string, Buffer>, index: string, firstScreen: string[], from: 'dist' | 'memory'): DashboardBundle {
  const assets = new Map<string, DashboardFile>()
  for (const [name, body] of files) assets.set(name, file(name, body))
  const firstScreenGzip = firstScreen.reduce((n, f) => n + (assets.get(f)?.gzip.length ?? 0), 0)
  return { index: file('index.html', Buffer.from(index)), assets, firstScreenGzip, from }
}

/** Writes the build under dist/dashboard (index.html, manifest.json, assets/...); returns the first screen's gzipped size. */
export async function writeDashboard(dir = DASHBOARD_DIST_DIR): Promise<{ firstScreenGzip: number; files: number }> {
  const { files, index, firstScreen } = await buildDashboard()
  rmSync(dir, { recursive: true, force: true })
  for (const [name, body] of files) {
    const p = join(dir, 'assets', name)
    mkdirSync(dirname(p), { recursive: true })
    writeFileSync(p, body)
  }
  writeFileSync(join(dir, 'index.html'), index)
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ firstScreen }))
  return { firstScreenGzip: toBundle(files, index, firstScreen, 'dist').firstScreenGzip, files: files.size }
}

function readDist(): DashboardBundle {
  const files = new Map<string, Buffer>()
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else files.set(relative(join(DASHBOARD_DIST_DIR, 'assets'), p), readFileSync(p))
    }
  }
  walk(join(DASHBOARD_DIST_DIR, 'assets'))
  const manifest = JSON.parse(readFileSync(join(DASHBOARD_DIST_DIR, 'manifest.json'), 'utf8')) as { firstScreen: string[] }
  return toBundle(files, readFileSync(join(DASHBOARD_DIST_DIR, 'index.html'), 'utf8'), manifest.firstScreen, 'dist')
}

async function load(): Promise<DashboardBundle> {
  const indexFile = join(DASHBOARD_DIST_DIR, 'index.html')
  const hasDist = existsSync(indexFile) && existsSync(join(DASHBOARD_DIST_DIR, 'manifest.json'))
  const hasSrc = existsSync(DASHBOARD_SRC_DIR)
  if (hasDist && (!hasSrc || statSync(indexFile).mtimeMs >= newestMtime(DASHBOARD_SRC_DIR))) return readDist()
  try {
    const { files, index, firstScreen } = await buildDashboard()
    return toBundle(files, index, firstScreen, 'memory')
  } catch (err) {
    if (hasDist) return readDist()
    throw new Error(`dashboard bundle unavailable: run "npm run build" (${(err as Error).message})`)
  }
}

/** The dashboard, loaded or built once per process; a failed attempt is retried on the next call. */
export const dashboardBundle = loadOnce(load)
