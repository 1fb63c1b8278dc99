/**
 * `npm run build` (and the first step of `npm start`): the service as plain JavaScript under dist/, so the
 * running process carries no TypeScript loader (about 70 MB less memory and a faster start than tsx), plus
 * the widget bundles in dist/widget. esbuild transpiles file by file (the layout under dist/src mirrors src/, and
 * widget/src under dist/widget/src, imports stay as written), then writes the processes' entry points (server,
 * worker, demo) over their per-file build as one bundle each (bundleEntries: a start spent 1.4 s in Node's module
 * loader); type checking is `npm run typecheck`'s job.
 *
 * When nothing it reads changed since the last build into the same folder (every file under src/, widget/ and
 * dashboard/ by size and mtime, this script, package.json and package-lock.json, esbuild's version: build-stamp.json
 * beside the output), it does nothing: `npm start` on an unchanged checkout then starts the server at once instead
 * of spending about 1.5 s rebuilding what is there (issue 41). `--force` builds anyway.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import * as esbuild from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// `--out <dir>`: build somewhere else (the start test does, so it never touches dist/ under other tests).
const outArg = process.argv.indexOf('--out')
const dist = outArg > 0 ? process.argv[outArg + 1] : join(root, 'dist')
const outdir = join(dist, 'src')

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name)
    if (e.isDirectory()) return sources(p)
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [p] : []
  })
}

/**
 * Packages the process bundles leave to Node's resolution: they find files beside their own modules (PGlite's
 * WebAssembly and extension, swagger's static files and package.json, pino's transport threads) or are native
 * (argon2, esbuild's binary).
 */
const BUNDLE_EXTERNAL = [
  '@electric-sql/pglite',
  '@electric-sql/pglite-pgvector',
  '@node-rs/argon2',
  'esbuild',
  '@fastify/swagger',
  '@fastify/swagger-ui',
  'pino',
  // loaded at their first use by a dynamic import (language detection's n-grams, 2 MB; the mail parser's MIME
  // tables, 1 MB): outside the bundle they are still read only when first needed
  'eld',
  'mailparser',
]

/**
 * The processes' entry points (the server, the worker, the demo) as one file each, written over their per-file
 * build: Node's module loader (resolving, reading and linking about 1,000 modules, two thirds of them packages')
 * took 1.4 s of every start, and the bundle loads in about half of that (docs/performance.md). Every other
 * file keeps its per-file build beside it: the parser threads' entry, the CLI, and what a bundled module finds
 * by its own location. For that, `import.meta.url` in our sources is rewritten to the URL of the module's
 * per-file build, so a module finds what lies beside it (the worker entry, the template, the project root)
 * exactly as before.
 */
async function bundleEntries() {
  const groups = [
    { dir: join(dist, 'src'), entries: ['src/server.ts', 'src/worker.ts'] },
    { dir: join(dist, 'scripts'), entries: ['scripts/demo.ts'] },
  ]
  await Promise.all(
    groups.map(({ dir, entries }) => {
      const moduleUrls = {
        name: 'module-urls',
        setup(b) {
          b.onLoad({ filter: /\.ts$/ }, (args) => {
            if (!args.path.startsWith(root) || args.path.includes('node_modules')) return undefined
            const source = readFileSync(args.path, 'utf8')
            if (!source.includes('import.meta.url')) return undefined
            let rel = relative(dir, join(dist, relative(root, args.path)))
              .replace(/\.ts$/, '.js')
              .split('\\')
              .join('/')
            if (!rel.startsWith('.')) rel = `./${rel}`
            return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`), loader: 'ts' }
          })
        },
      }
      return esbuild.build({
        entryPoints: entries.map((e) => join(root, e)),
        outdir: dir,
        bundle: true,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        logLevel: 'error',
        external: BUNDLE_EXTERNAL,
        // 8 MB to 5.4 MB, which Node reads and V8 compiles at every start; names are kept (errors and logs read them)
        minifyWhitespace: true,
        minifySyntax: true,
        // the bundled CommonJS packages' `require` of Node's own modules
        banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
        plugins: [moduleUrls],
      })
    }),
  )
}

const started = performance.now()
// widget/src too: the service shares some of the widget's modules (its English labels).
// The demo (npm run demo) and the fake model it bundles run from the build too: loading them under tsx took 1.6 s
// of the demo's first start, about a second more than the built JavaScript.
const DEMO_FILES = ['scripts/demo.ts', 'test/fakes/fake-llm.ts', 'test/fakes/fake-servers.ts', 'test/fakes/fake-tools.ts'].map((f) => join(root, f))
const entryPoints = [...sources(join(root, 'src')), ...sources(join(root, 'widget', 'src')), ...DEMO_FILES]

/** Every file the build reads, by size and mtime: any change (an edit, a checkout, a deleted file) differs. */
function fingerprint() {
  const files = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]))
  const key = (f) => {
    const st = statSync(f, { throwIfNoEntry: false })
    return st ? `${relative(root, f)} ${st.size} ${st.mtimeMs}` : `${relative(root, f)} -`
  }
  const inputs = [
    ...['src', 'widget', 'dashboard'].flatMap((d) => files(join(root, d))),
    ...DEMO_FILES,
    fileURLToPath(import.meta.url),
    join(root, 'package.json'),
    join(root, 'package-lock.json'),
  ]
  return JSON.stringify({ esbuild: esbuild.version, out: outArg > 0, inputs: inputs.sort().map(key) })
}
const stampFile = join(dist, 'build-stamp.json')
const stamp = fingerprint()
const outputs = [
  join(outdir, 'server.js'),
  join(dist, 'pgdata-template', 'template.json'),
  ...(outArg > 0 ? [] : [join(dist, 'widget', 'embed.js'), join(dist, 'dashboard', 'index.html')]),
]
if (!process.argv.includes('--force') && outputs.every((f) => existsSync(f)) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
  console.error(`${relative(process.cwd(), dist) || '.'} is up to date (${Math.round(performance.now() - started)} ms)`)
  process.exit(0)
}
// gone before anything is rebuilt, so a build stopped half-way is never taken for a finished one
rmSync(stampFile, { force: true })
rmSync(outdir, { recursive: true, force: true })
rmSync(join(dist, 'widget', 'src'), { recursive: true, force: true })
await esbuild.build({
  entryPoints,
  outdir: dist,
  outbase: root,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
})
await bundleEntries()
// The language detector's database as JSON, read 4-5 x faster than eld's own object literal (src/modules/shared/language-detect.ts).
// An eld that lays its files out otherwise is built without it: the service then loads eld's own, as it does when
// the file is missing (so it is not one of the outputs that make a build current).
{
  const { writeDetectorData } = await import(pathToFileURL(resolve(outdir, 'modules/shared/language-detect.js')).href)
  const file = join(dist, 'eld-small.json')
  try {
    await writeDetectorData(file)
  } catch (err) {
    rmSync(file, { force: true })
    console.error(`the language detector's JSON database was not written (${err instanceof Error ? err.message : err}); the service loads eld's own`)
  }
}
// A migrated, empty embedded database a fresh DATA_DIR is copied from (src/db/template.ts); kept while the
// migrations and the PGlite version are unchanged, so only a build after a new migration pays for it.
{
  const templateStarted = performance.now()
  const { buildTemplate } = await import(pathToFileURL(resolve(outdir, 'db/client.js')).href)
  const templateDir = join(dist, 'pgdata-template')
  const mainTemplate = join(root, 'dist', 'pgdata-template')
  // A build elsewhere (the tests' scratch builds) starts from the project's template; kept when still current.
  if (outArg > 0 && !existsSync(templateDir) && existsSync(join(mainTemplate, 'template.json'))) {
    cpSync(mainTemplate, templateDir, { recursive: true })
  }
  const what = await buildTemplate(templateDir)
  if (what === 'made') {
    console.error(
      `made the embedded database template in ${join(relative(process.cwd(), dist) || '.', 'pgdata-template')} (${Math.round(performance.now() - templateStarted)} ms)`,
    )
  }
}
if (outArg > 0) {
  console.error(`built ${entryPoints.length} files into ${dist} (${Math.round(performance.now() - started)} ms)`)
} else {
  // The widget bundles beside it, so the service serves them from disk instead of building them in memory.
  const { buildBundles, WIDGET_DIST_DIR } = await import(join(outdir, 'modules/widget/widget.assets.js'))
  const bundles = await buildBundles()
  mkdirSync(WIDGET_DIST_DIR, { recursive: true })
  writeFileSync(join(WIDGET_DIST_DIR, 'embed.js'), bundles.embed)
  writeFileSync(join(WIDGET_DIST_DIR, 'widget.js'), bundles.widget)
  // The operator dashboard (dashboard/src) beside it; its first screen must stay within 150 KB gzipped.
  const { writeDashboard, DASHBOARD_DIST_DIR } = await import(join(outdir, 'modules/dashboard/dashboard.assets.js'))
  const dash = await writeDashboard()
  console.error(
    `built ${entryPoints.length} files into ${relative(process.cwd(), dist) || '.'} and the widget in ${relative(process.cwd(), WIDGET_DIST_DIR)} (${Math.round(performance.now() - started)} ms)`,
  )
  console.error(
    `dashboard: ${dash.files} files in ${relative(process.cwd(), DASHBOARD_DIST_DIR)}; first screen ${(dash.firstScreenGzip / 1024).toFixed(1)} KB gzipped (budget 150 KB)`,
  )
  if (dash.firstScreenGzip > 150 * 1024) {
    console.error('dashboard first screen is over its 150 KB budget')
    process.exit(1)
  }
}
writeFileSync(stampFile, stamp)
