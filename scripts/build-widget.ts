/**
 * `npm run build:widget`: writes dist/widget/embed.js (the loader) and dist/widget/widget.js (the UI), and
 * prints their gzipped sizes. Upload both to any static host and set WIDGET_LOADER_URL to it, or let the
 * service serve them (it prefers this build when present and up to date).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { buildBundles, WIDGET_DIST_DIR } from '../src/modules/widget/widget.assets.js'

const bundles = await buildBundles()
mkdirSync(WIDGET_DIST_DIR, { recursive: true })
for (const [name, code] of [
  ['embed.js', bundles.embed],
  ['widget.js', bundles.widget],
] as const) {
  writeFileSync(join(WIDGET_DIST_DIR, name), code)
  const gz = gzipSync(Buffer.from(code), { level: 9 }).length
  console.log(`${join('dist/widget', name)}: ${(code.length / 1024).toFixed(1)} KB, ${(gz / 1024).toFixed(2)} KB gzipped`)
}
