#!/usr/bin/env bash
# `npm test`: the full suite. Installs what is missing, checks format and lint, builds (which
# type-checks every package), type-checks the tests, makes sure NATS runs, then runs every mocha test
# and, for the whole suite, the multi-replica failover test (`npm run test:cluster` alone).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/ensure-nats.sh
npx biome ci . --reporter=summary
npm run build --silent
npx tsc -p tsconfig.tests.json
if [ "$#" -gt 0 ]; then
  exec npx mocha "$@"
fi
npx mocha "services/*/test/**/*.test.ts" "edge/test/**/*.test.ts" "clients/*/test/**/*.test.ts" "deploy/test/**/*.test.ts" "scripts/test/**/*.test.ts"
npx mocha "edge/test/cluster/*.cluster.ts"
