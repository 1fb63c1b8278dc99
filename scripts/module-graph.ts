/**
 * The import graph between modules (the folders under src/modules; a nested folder such as
 * documents/sources belongs to its top folder) and its cycles. Type-only imports count: a cycle of types
 * still means two modules that cannot be read, changed or moved apart.
 *
 *   npm run check:cycles   prints every cycle and exits 1 when there is one (test/structure.test.ts asserts none)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(fileURLToPath(import.meta.url), '../..')
const MODULES = join(ROOT, 'src/modules')

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) yield* sourceFiles(p)
    else if (/\.(ts|mts|mjs)$/.test(name)) yield p
  }
}

/** The module a file under src/modules belongs to, or null (src/modules/index.ts wires them all and is no module). */
function moduleOf(file: string): string | null {
  const rel = relative(MODULES, file)
  if (rel.startsWith('..') || !rel.includes(sep)) return null
  return rel.split(sep)[0]!
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g

/** module -> modules it imports, each with one file that does it (for the message). */
export function moduleGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>()
  for (const file of sourceFiles(MODULES)) {
    const from = moduleOf(file)
    if (!from) continue
    const edges = graph.get(from) ?? new Map<string, string>()
    graph.set(from, edges)
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const to = moduleOf(resolve(dirname(file), (m[1] ?? m[2])!))
      if (to && to !== from && !edges.has(to)) edges.set(to, relative(ROOT, file))
    }
  }
  return graph
}

/** Every elementary cycle's strongly connected component of more than one module (Tarjan), as module lists. */
export function moduleCycles(graph = moduleGraph()): string[][] {
  let index = 0
  const idx = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const on = new Set<string>()
  const out: string[][] = []
  const visit = (v: string) => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    on.add(v)
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!))
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = []
      let w: string
      do {
        w = stack.pop()!
        on.delete(w)
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1) out.push(scc.sort())
    }
  }
  for (const v of graph.keys()) if (!idx.has(v)) visit(v)
  return out
}

/** "a -> b (file)" lines that explain a cycle. */
export function explain(cycle: string[], graph = moduleGraph()): string[] {
  const set = new Set(cycle)
  return cycle.flatMap((a) => [...(graph.get(a) ?? [])].filter(([b]) => set.has(b)).map(([b, file]) => `${a} -> ${b} (${file})`))
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const graph = moduleGraph()
  const cycles = moduleCycles(graph)
  for (const c of cycles) console.error(`cycle: ${c.join(', ')}\n  ${explain(c, graph).join('\n  ')}`)
  console.log(`${graph.size} modules, ${cycles.length} import cycles between modules`)
  process.exit(cycles.length ? 1 : 0)
}
