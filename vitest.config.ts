import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/setup-image.ts'],
    pool: 'forks',
    // A test process runs file after file without restarting: the app's modules are imported once per process, not
    // once per file (about 3 s of CPU each). Measured on 10 HTTP test files: 353 s -> 237 s wall, 145 s -> 99 s CPU.
    // Files still get apps, databases and fakes of their own; nothing a test file sets is module-global.
    isolate: false,
    // 2 on the embedded database (PGlite runs in the test processes, CPU-bound on 2 cores); the PostgreSQL pass of
    // scripts/test-all.sh sets 3, since there much of a test's time is spent waiting on the database server
    maxWorkers: Number(process.env.TEST_WORKERS) || 2,
    testTimeout: 30_000,
    // CI machines have 2 cores under a full suite; one retry absorbs a timing miss, a real failure fails twice.
    // scripts/test-all.sh (the CI command) sets TEST_RETRY=1; the summary reporter lists every test that needed it.
    retry: Number(process.env.TEST_RETRY ?? (process.env.CI ? 1 : 0)),
    // set-up starts a whole app (an in-memory database migrated from scratch on the embedded pass): on a loaded
    // 2-core CI machine that once took over 60 s
    hookTimeout: 180_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
})
