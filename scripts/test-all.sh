#!/usr/bin/env bash
# The whole suite twice: on the embedded PGlite (what a fresh clone has), then on PostgreSQL + Redis
# (started first when they are installed but down). Used by .ci/run.
set -uo pipefail
cd "$(dirname "$0")/.."

npm install --no-fund --no-audit
status=0
# Each pass appends its failed tests and its count line here; they are repeated at the very end, where a CI log's
# tail shows them, since the first pass's own summary is far above the second pass's output.
summary=$(mktemp)
export TEST_SUMMARY_FILE=$summary
# One retry per failing test (vitest.config.ts): the CI machine shares 2 cores with other work. A test that passes
# only on its retry is listed in the summary as "PASSED ONLY ON RETRY", to be fixed; a real failure fails twice.
export TEST_RETRY=${TEST_RETRY:-1}
no_summary_check() {
  tail -1 "$summary" | grep -q ':$' \
    && echo "no test summary: the static checks failed or vitest did not finish (see the log above)" >>"$summary"
  return 0
}

# The widget's browser tests drive Debian's chromium (never a browser download); install it when we can.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  (timeout 600 apt-get update -qq && timeout 900 apt-get install -y -qq chromium >/dev/null) \
    || echo "chromium could not be installed: browser tests will be skipped" >&2
fi

echo "=== suite on embedded PGlite, no Redis ==="
echo "embedded PGlite:" >>"$summary"
env -u DATABASE_URL -u REDIS_URL npm test || status=1
no_summary_check

PG_URL=${CI_DATABASE_URL:-postgres://root@127.0.0.1:5432/test}
REDIS=${CI_REDIS_URL:-redis://127.0.0.1:6379}
if command -v pg_ctlcluster >/dev/null 2>&1 && ! pg_isready -h 127.0.0.1 -p 5432 -q; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
if command -v redis-server >/dev/null 2>&1 && ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no || true
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi

if pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  # The browser tests drive the dashboard and the widget through the same API the HTTP tests cover on both
  # databases; they ran in the first pass, and repeating them here would cost about 2 of CI's 20 minutes.
  # The same holds for the tests of file parsing, hostile files, page extraction and the crawler's size limits: what
  # they test happens before anything is stored, and the storing is covered here by documents and sources tests.
  # The type checks and lint ran in the first pass too (STATIC_CHECKS_DONE). With the database in its own server,
  # three test processes keep 2 cores busy where two left them waiting. Together about 2 minutes of CI's 20.
  # The demo walk (test/demo-walk.test.ts) runs the demo, which always stands on its own embedded database: the
  # same run twice (test/demo.test.ts stays: it checks the demo ignores the suite's DATABASE_URL).
  echo "=== suite on PostgreSQL + Redis (browser, parser and crawler-limit tests ran in the first pass) ==="
  echo "PostgreSQL + Redis:" >>"$summary"
  STATIC_CHECKS_DONE=1 TEST_WORKERS=3 DATABASE_URL=$PG_URL REDIS_URL=$REDIS npm test -- --exclude 'test/browser/**' \
    --exclude test/documents-parsers.test.ts --exclude test/documents-hostile.test.ts \
    --exclude test/sources-content.test.ts --exclude test/sources-limits.test.ts --exclude test/demo-walk.test.ts || status=1
  no_summary_check
else
  echo "PostgreSQL or Redis is not available on 127.0.0.1: the server-backed run was NOT done" >&2
  [ "${CI:-}" = "true" ] && status=1
fi
echo "=== both passes ==="
cat "$summary"
rm -f "$summary"
exit $status
