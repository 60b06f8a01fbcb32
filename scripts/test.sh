#!/usr/bin/env bash
# `npm test`: the full suite. Installs what is missing, checks format and lint, builds (which
# type-checks every package), type-checks the tests, makes sure NATS runs, then runs every mocha test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/ensure-nats.sh
npx biome ci . --reporter=summary
npm run build --silent
npx tsc -p tsconfig.tests.json
if [ "$#" -eq 0 ]; then
  set -- "services/*/test/**/*.test.ts" "edge/test/**/*.test.ts" "deploy/test/**/*.test.ts" "scripts/test/**/*.test.ts"
fi
npx mocha "$@"
