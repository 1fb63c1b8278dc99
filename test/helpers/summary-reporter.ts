import { appendFileSync } from 'node:fs'
import type { Reporter, TestModule } from 'vitest/node'

/**
 * Ends the run with one plain line, "N passed, N failed, N skipped", that any CI can read, preceded by one line per
 * failed test (file, name, the error's first line) and per test that passed only when retried (with its failed attempt's). With TEST_SUMMARY_FILE set, the same lines are appended there,
 * so scripts/test-all.sh can repeat both passes' failures at the very end of a long CI log.
 */
/** An error's first line, at most 300 characters ('' for none). */
const firstLine = (err: { message?: string } | undefined): string => (err?.message ?? '').split('\n')[0]!.slice(0, 300)

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    const lines: string[] = []
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const r = t.result()
        const retries = t.diagnostic()?.retryCount ?? 0
        if (r.state === 'passed' && retries > 0) {
          // a retry hides a test that fails under load; it is listed so it gets fixed, not forgotten, with the failed
          // attempt's error (vitest keeps it on a passed result), without which a flake seen once cannot be traced
          const was = firstLine(r.errors?.[0])
          lines.push(`PASSED ONLY ON RETRY ${retries}: ${m.moduleId.replace(process.cwd() + '/', '')} > ${t.fullName}${was ? ` (first attempt: ${was})` : ''}`)
        }
        if (r.state === 'passed') passed++
        else if (r.state === 'failed') {
          failed++
          lines.push(`FAILED ${m.moduleId.replace(process.cwd() + '/', '')} > ${t.fullName}: ${firstLine(r.errors?.[0])}`)
        } else skipped++
      }
      if (m.state() === 'failed' && [...m.children.allTests()].length === 0) {
        failed++
        lines.push(`FAILED ${m.moduleId.replace(process.cwd() + '/', '')} (file): ${firstLine(m.errors()[0])}`)
      }
    }
    const summary = [...lines, `${passed} passed, ${failed} failed, ${skipped} skipped`].join('\n') + '\n'
    process.stdout.write(`\n${summary}`)
    const file = process.env.TEST_SUMMARY_FILE
    if (file) appendFileSync(file, summary)
  }
}
