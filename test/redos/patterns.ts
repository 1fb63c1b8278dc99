import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'

/** One regular expression written in src/: a literal, or `new RegExp` / `RegExp` of a literal string. */
export interface FoundPattern {
  file: string
  line: number
  source: string
  flags: string
}

const ROOT = join(import.meta.dirname, '..', '..')

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    if (statSync(p).isDirectory()) return files(p)
    return p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('.d.ts') ? [p] : []
  })
}

const literalText = (n: ts.Node | undefined): string | null => (n && (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) ? n.text : null)

/** Every regular expression of src/ (tests excluded), by a TypeScript parse of each file. */
export function patternsInSrc(): FoundPattern[] {
  const found: FoundPattern[] = []
  for (const path of files(join(ROOT, 'src'))) {
    const file = relative(ROOT, path)
    const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true)
    const line = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart()).line + 1
    const visit = (n: ts.Node) => {
      if (ts.isRegularExpressionLiteral(n)) {
        const end = n.text.lastIndexOf('/')
        found.push({ file, line: line(n), source: n.text.slice(1, end), flags: n.text.slice(end + 1) })
      } else if ((ts.isNewExpression(n) || ts.isCallExpression(n)) && ts.isIdentifier(n.expression) && n.expression.text === 'RegExp') {
        const source = literalText(n.arguments?.[0])
        if (source !== null) found.push({ file, line: line(n), source, flags: literalText(n.arguments?.[1]) ?? '' })
      }
      ts.forEachChild(n, visit)
    }
    visit(sf)
  }
  return found
}

export const keyOf = (p: { source: string; flags: string }) => `/${p.source}/${p.flags}`
