#!/usr/bin/env bash
# The static half of `npm test`: both type checks and the linter. They do not depend on the database, so the
# second pass of scripts/test-all.sh (PostgreSQL + Redis) sets STATIC_CHECKS_DONE=1 after the first pass ran them.
set -euo pipefail
if [ "${STATIC_CHECKS_DONE:-}" = "1" ]; then
  echo "type checks and lint: done in this run's first pass"
  exit 0
fi
tsc --noEmit
tsc --noEmit -p dashboard
biome check .
