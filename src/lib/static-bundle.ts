import { existsSync, readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * What the widget and the dashboard share in serving their browser bundles: where the project is (src/
 * under tsx, dist/src/ when built), whether a build on disk is older than its source, and loading once.
 */

/** The nearest folder up from `moduleUrl` that holds a package.json. */
export function projectRoot(moduleUrl: string): string {
  let dir = dirname(fileURLToPath(moduleUrl))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return dir
}

/** The newest modification time of any file below `dir`. */
export function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs)
  }
  return newest
}

/** `load` run once per process and its promise shared; a failed attempt is retried on the next call. */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let cached: Promise<T> | null = null
  return () => {
    cached ??= load().catch((err) => {
      cached = null
      throw err
    })
    return cached
  }
}
