/**
 * The visitor's language from what they wrote, by a maintained n-gram detector (eld, "small" database) with a
 * reliability verdict, instead of counting function words: a message is read only when it has at least
 * MIN_LETTERS letters, the detector calls its verdict reliable and the best language leads the second by
 * MIN_MARGIN (short or mixed messages such as "ok", "danke" or "password reset" wait for a clearer one).
 *
 * Loading eld's database (a 1.6 MB JavaScript object literal) costs about 0.5 s of CPU and 150 MB of memory,
 * which a service's first turn paid. The build writes the same database as JSON (`npm run build`:
 * dist/eld-small.json, with the eld version it came from), which JSON.parse reads in about 0.11 s into 50 MB;
 * it is handed to eld's own detector (the package's languageDetector module, which its entry points use the same
 * way), so detection is eld's, unchanged. Without that file, or when it came from another eld version, the
 * package's own entry loads it as before. The service's entry points load it once they listen (`preloadDetector`);
 * anything else loads it on first use.
 */

import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const MIN_LETTERS = 10
/** The lead of the best score over the second: "password reset" reads as Italian by 0.03, a German question leads by 0.1-0.4. */
export const MIN_MARGIN = 0.05

interface Detector {
  detect(text: string): { language: string; isReliable(): boolean; getScores(): Record<string, number> }
}

/** The JSON form of eld's database the build writes, and the eld version it was read from. */
interface DetectorData {
  eld: string
  ngramsData: unknown
}

const DATA_FILE = 'eld-small.json'

let loading: Promise<Detector> | null = null
let loaded: Detector | null = null

/**
 * eld's files. Its exports map names only its entry points, and only for import (no require condition), so the
 * package folder is found where Node would look for it (once per process).
 */
let eldDir: string | null = null
function eldFile(relativeToPackage: string): URL {
  eldDir ??= (createRequire(import.meta.url).resolve.paths('eld') ?? []).map((d) => join(d, 'eld')).find((d) => existsSync(join(d, 'package.json'))) ?? null
  if (!eldDir) throw new Error('eld is not installed')
  return pathToFileURL(join(eldDir, relativeToPackage))
}

function eldVersion(): string {
  return (JSON.parse(readFileSync(eldFile('package.json'), 'utf8')) as { version: string }).version
}

/**
 * Where the build puts the JSON database: dist/ beside the running code (dist/src/modules/shared/language-detect.js),
 * or the project's dist/ when running from src/ under tsx (the tests, a checkout that was built).
 */
export function defaultDetectorDataFile(): string {
  const here = dirname(fileURLToPath(import.meta.url))
  const beside = join(here, '..', '..', '..', DATA_FILE)
  return existsSync(beside) ? beside : join(here, '..', '..', '..', 'dist', DATA_FILE)
}

/** For the build: eld's "small" database written as JSON with the installed eld version (see above). */
export async function writeDetectorData(file: string): Promise<void> {
  const { ngramsData } = (await import(eldFile('src/ngrams/small.js').href)) as { ngramsData: unknown }
  writeFileSync(file, JSON.stringify({ eld: eldVersion(), ngramsData } satisfies DetectorData))
}

/** eld's detector over the build's JSON database, or null when there is none for the installed eld. */
export async function detectorFromData(file: string): Promise<Detector | null> {
  if (!existsSync(file)) return null
  const data = JSON.parse(readFileSync(file, 'utf8')) as DetectorData
  if (data.eld !== eldVersion()) return null
  const { createEld } = (await import(eldFile('src/languageDetector.js').href)) as {
    createEld(): { instance: Detector; loadData(data: unknown): string }
  }
  const { instance, loadData } = createEld()
  return loadData(data.ngramsData) ? instance : null
}

/** The detector, loaded once per process: from the build's JSON database when it has one, else by eld's entry. */
export function loadDetector(dataFile = defaultDetectorDataFile()): Promise<Detector> {
  if (!loading) {
    loading = detectorFromData(dataFile)
      .catch(() => null)
      .then(async (fast) => fast ?? ((await import('eld/small')).eld as Detector))
      .then((d) => (loaded = d))
    loading.catch(() => (loading = null))
  }
  return loading
}

/** For a service's entry point once it listens: the first turn does not wait for the database. */
export function preloadDetector(): void {
  setImmediate(() => void loadDetector().catch(() => {}))
}

export function countLetters(text: string): number {
  let n = 0
  for (const _ of text.matchAll(/\p{L}/gu)) n++
  return n
}

/** The language of the text when it is clear (see above), else null. Needs loadDetector() first (else null). */
export function clearLanguageSync(text: string): string | null {
  if (!loaded) return null
  const sample = text.slice(0, 2000)
  if (countLetters(sample) < MIN_LETTERS) return null
  const r = loaded.detect(sample)
  if (!r.language || !r.isReliable()) return null
  const scores = Object.values(r.getScores()).sort((a, b) => b - a)
  if (scores.length > 1 && scores[0]! - scores[1]! < MIN_MARGIN) return null
  return r.language
}

export async function clearLanguage(text: string): Promise<string | null> {
  await loadDetector()
  return clearLanguageSync(text)
}

/**
 * For one turn's search only (never stored as the session's language): the likeliest language of a question
 * whose language is not clear, when it is clearly not `unlike` (the knowledge's): the best guess leads `unlike`'s
 * score by MIN_MARGIN. "cambiar el motor de búsqueda en edge" is not clear enough to settle a session, but is
 * clearly not English; "download ddg browser" (German 0.76, English 0.73) stays English.
 */
export function likelyLanguageSync(text: string, unlike: string): string | null {
  if (!loaded) return null
  const sample = text.slice(0, 2000)
  if (countLetters(sample) < MIN_LETTERS) return null
  const r = loaded.detect(sample)
  if (!r.language || r.language === unlike) return null
  const scores = r.getScores()
  const best = scores[r.language] ?? 0
  return best - (scores[unlike] ?? 0) >= MIN_MARGIN ? r.language : null
}
