import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * A migrated, empty PGlite data directory made at build time (`npm run build` writes dist/pgdata-template),
 * from which a fresh DATA_DIR starts: copying 40 MB of files takes a fraction of a second, while initdb in
 * WebAssembly plus the migrations took most of a first start. Beside the data directory, template.json names
 * the migrations it carries and the PGlite version that made it. A fresh data directory is seeded only when
 * that version is the installed one and the carried migrations are the first ones of the current list (the
 * newer ones then run as usual at open); any other template is ignored and the database is made from scratch.
 */
export interface TemplateManifest {
  pglite: string
  migrations: string[]
}

const MANIFEST = 'template.json'
const DATA = 'pgdata'

export function pgliteVersion(): string {
  const require = createRequire(import.meta.url)
  try {
    // The package's exports do not list package.json: find it beside the resolved entry point.
    let dir = dirname(require.resolve('@electric-sql/pglite'))
    for (let i = 0; i < 5; i++) {
      const file = join(dir, 'package.json')
      if (existsSync(file)) {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string }
        if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version
      }
      dir = dirname(dir)
    }
  } catch {}
  return 'unknown'
}

/**
 * Where the template is looked for: dist/pgdata-template beside the running code (dist/src/db/template.js),
 * or under dist/ of the project when running from src/ under tsx (the demo, the tests). Callers of
 * openDatabase may pass another (`templateDir`), or null for none.
 */
export function defaultTemplateDir(): string {
  const here = dirname(fileURLToPath(import.meta.url))
  const besideDist = join(here, '..', '..', 'pgdata-template')
  if (existsSync(join(besideDist, MANIFEST))) return besideDist
  return join(here, '..', '..', 'dist', 'pgdata-template')
}

export function readManifest(templateDir: string): TemplateManifest | null {
  try {
    const m = JSON.parse(readFileSync(join(templateDir, MANIFEST), 'utf8')) as TemplateManifest
    if (typeof m.pglite !== 'string' || !Array.isArray(m.migrations)) return null
    return m
  } catch {
    return null
  }
}

/** Whether a template carrying `carried` can seed a database whose full history is `current` (sorted names). */
export function templateUsable(manifest: TemplateManifest | null, current: string[], version = pgliteVersion()): boolean {
  if (!manifest || manifest.pglite !== version || manifest.migrations.length === 0) return false
  if (manifest.migrations.length > current.length) return false
  return manifest.migrations.every((name, i) => current[i] === name)
}

/** Whether the template is exactly current (nothing to top up): the build keeps it then. */
export function templateCurrent(manifest: TemplateManifest | null, current: string[], version = pgliteVersion()): boolean {
  return templateUsable(manifest, current, version) && manifest!.migrations.length === current.length
}

/**
 * Seeds a not-yet-created PGlite data directory from the template. Returns the migrations it carried, or null
 * when it did nothing (a database exists there already, no usable template). The copy goes to a sibling first
 * and is renamed into place, so a process killed mid-copy leaves no half database behind.
 */
export function seedFromTemplate(dataDir: string, templateDir: string | null, current: string[]): string[] | null {
  if (!templateDir || existsSync(join(dataDir, 'PG_VERSION'))) return null
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) return null
  const manifest = readManifest(templateDir)
  if (!templateUsable(manifest, current)) return null
  const source = join(templateDir, DATA)
  if (!existsSync(join(source, 'PG_VERSION'))) return null
  const staging = `${dataDir}.seeding-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  try {
    cpSync(source, staging, { recursive: true })
    rmSync(dataDir, { recursive: true, force: true })
    mkdirSync(dirname(dataDir), { recursive: true })
    renameSync(staging, dataDir)
  } catch {
    rmSync(staging, { recursive: true, force: true })
    return null
  }
  return manifest!.migrations
}

/**
 * Makes (or keeps, when current) the template in `templateDir`: a PGlite data directory on which every
 * migration ran, closed cleanly. `make` opens and migrates a database in the given folder and closes it.
 */
export async function ensureTemplate(templateDir: string, current: string[], make: (pgdataDir: string) => Promise<void>): Promise<'kept' | 'made'> {
  if (templateCurrent(readManifest(templateDir), current) && existsSync(join(templateDir, DATA, 'PG_VERSION'))) return 'kept'
  const staging = `${templateDir}.making-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  try {
    await make(join(staging, DATA))
    const manifest: TemplateManifest = { pglite: pgliteVersion(), migrations: current }
    writeFileSync(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
    rmSync(templateDir, { recursive: true, force: true })
    renameSync(staging, templateDir)
  } catch (err) {
    rmSync(staging, { recursive: true, force: true })
    throw err
  }
  return 'made'
}
