/**
 * Real-world files through the real parsers (npm run bench:files): every file under ../shared/data/files
 * (relative to the repository root; BENCH_FILES_DIR overrides) goes through the parser worker pool exactly
 * as an upload would, each with its own time budget. Reported per file and in total:
 *   parsed      text extracted
 *   clean 4xx   refused with a clear message (422 parse error, or 400 unsupported type)
 *   crash       a parser library threw something unexpected, or its worker died (out of memory)
 *   hang        the file exceeded its time budget and its worker was terminated
 * Target: zero crashes, zero hangs.
 *
 * Env: BENCH_FILE_TIMEOUT_MS (default 30000), BENCH_FILES_DIR.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ParseFailure, UnsupportedFile } from '../src/modules/documents/parsers/errors.js'
import { DEFAULT_PARSE_LIMITS } from '../src/modules/documents/parsers/parse.js'
import { createParserPool, ParserCrash, ParserTimeout } from '../src/modules/documents/parsers/pool.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const dir = process.env.BENCH_FILES_DIR ?? resolve(root, '../shared/data/files')
const timeoutMs = Number(process.env.BENCH_FILE_TIMEOUT_MS ?? 30_000)

if (!existsSync(dir)) {
  console.log(`No real-world files at ${dir}; nothing to do.`)
  process.exit(0)
}

function walk(d: string): string[] {
  return readdirSync(d).flatMap((name) => {
    const p = join(d, name)
    if (statSync(p).isDirectory()) return name === 'LICENSES' ? [] : walk(p)
    return /\.(md|txt)$/i.test(name) && /^(README|LICENSE)/i.test(name) ? [] : [p]
  })
}

type Outcome = 'parsed' | 'clean 422' | 'clean 400' | 'crash' | 'hang'

const pool = createParserPool({ size: 1, timeoutMs, maxMemoryMb: 1024, limits: DEFAULT_PARSE_LIMITS })
const rows: { file: string; kb: number; outcome: Outcome; type: string; chars: number; ms: number; note: string }[] = []
const files = walk(dir).sort()
for (const path of files) {
  const bytes = readFileSync(path)
  const name = path.split('/').pop()!
  const t0 = performance.now()
  let outcome: Outcome
  let type = ''
  let chars = 0
  let note = ''
  try {
    const r = await pool.parse(name, bytes)
    outcome = 'parsed'
    type = r.fileType
    chars = r.text.length
    note = r.text.slice(0, 60).replace(/\s+/g, ' ')
  } catch (err) {
    const e = err as Error
    if (err instanceof ParserCrash) [outcome, note] = ['crash', (err as ParserCrash).detail]
    else if (err instanceof ParserTimeout) [outcome, note] = [/too long/.test(e.message) ? 'hang' : 'crash', e.message]
    else if (err instanceof UnsupportedFile) [outcome, note] = ['clean 400', e.message]
    else if (err instanceof ParseFailure) [outcome, note] = ['clean 422', e.message]
    else [outcome, note] = ['crash', `${e.name}: ${e.message}`]
  }
  rows.push({
    file: relative(dir, path),
    kb: Math.round(bytes.length / 1024),
    outcome,
    type,
    chars,
    ms: Math.round(performance.now() - t0),
    note: note.slice(0, 70),
  })
}
await pool.close()

console.table(rows)
const count = (o: Outcome) => rows.filter((r) => r.outcome === o).length
console.log(
  `${rows.length} files: ${count('parsed')} parsed, ${count('clean 422')} clean 422, ${count('clean 400')} clean 400, ${count('crash')} crashes, ${count('hang')} hangs (budget ${timeoutMs} ms per file)`,
)
process.exitCode = count('crash') + count('hang') > 0 ? 1 : 0
