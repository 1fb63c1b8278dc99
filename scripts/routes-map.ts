/**
 * The route map in docs/ARCHITECTURE.md (method, path -> file), generated from the Fastify route table of
 * the real app: every module's routes are registered with a hook that notes which file under src/ called
 * app.get/post/... for each route.
 *
 *   npm run routes:map            rewrites the map between the markers in docs/ARCHITECTURE.md
 *   npm run routes:map -- --check exits 1 when the map there is stale (test/structure.test.ts does the same)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyPluginAsync, RouteOptions } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { closeContext, createContext } from '../src/context.js'
import { wireModules } from '../src/modules/index.js'

const ROOT = resolve(fileURLToPath(import.meta.url), '../..')
export const DOC = join(ROOT, 'docs/ARCHITECTURE.md')
const BEGIN = '<!-- routes:begin (npm run routes:map) -->'
const END = '<!-- routes:end -->'

/** The first frame of the current stack in a source file under src/modules (the routes file that declared the route). */
function declaringFile(): string {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 60
  const stack = new Error().stack ?? ''
  Error.stackTraceLimit = limit
  for (const line of stack.split('\n')) {
    const m = /(?:file:\/\/)?(\/[^\s():]+\/src\/modules\/[^\s():]+\.ts)/.exec(line)
    if (m) return relative(ROOT, m[1]!)
  }
  return '?'
}

/** `METHOD path -> file` for every route the modules register (HEAD twins of GET left out). */
export async function collectRoutes(): Promise<{ method: string; path: string; file: string }[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'scb-routes-'))
  const config = loadConfig(
    {
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      JWT_SECRET: 'routes-map-jwt-secret-that-is-long-enough-0123',
      ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
      LOG_LEVEL: 'silent',
    },
    () => {},
  )
  const ctx = await createContext(config, { pgliteDir: 'memory' })
  const routes: { method: string; path: string; file: string }[] = []
  try {
    const modules = wireModules(ctx)
    const noted =
      (plugin: FastifyPluginAsync): FastifyPluginAsync =>
      async (app, opts) => {
        app.addHook('onRoute', (r: RouteOptions) => {
          const file = declaringFile()
          for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, path: r.url, file })
        })
        await plugin(app, opts)
      }
    const app = await buildApp(ctx, { ...modules, routes: modules.routes.map(noted) })
    await app.ready()
    await app.close()
  } finally {
    await closeContext(ctx)
    rmSync(dataDir, { recursive: true, force: true })
  }
  const seen = new Set<string>()
  return routes
    .filter((r) => !seen.has(`${r.method} ${r.path}`) && seen.add(`${r.method} ${r.path}`))
    .sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method))
}

/** The Markdown table, with the markers around it. */
export async function routeMapSection(): Promise<string> {
  const rows = (await collectRoutes()).map((r) => `| ${r.method} | \`${r.path}\` | \`${r.file}\` |`)
  return [BEGIN, '| Method | Path | File |', '|---|---|---|', ...rows, END].join('\n')
}

/** The map as it stands in the document, or null when the markers are missing. */
export function currentSection(doc = readFileSync(DOC, 'utf8')): string | null {
  const a = doc.indexOf(BEGIN)
  const b = doc.indexOf(END)
  return a < 0 || b < a ? null : doc.slice(a, b + END.length)
}

async function main() {
  const fresh = await routeMapSection()
  const doc = readFileSync(DOC, 'utf8')
  const current = currentSection(doc)
  if (process.argv.includes('--check')) {
    if (current !== fresh) {
      console.error('docs/ARCHITECTURE.md: the route map is stale; run npm run routes:map')
      process.exit(1)
    }
    console.log('route map up to date')
    return
  }
  if (current === null) throw new Error(`docs/ARCHITECTURE.md has no ${BEGIN} ... ${END} section`)
  writeFileSync(DOC, doc.replace(current, fresh))
  console.log(`route map: ${fresh.split('\n').length - 4} routes`)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
