#!/usr/bin/env bash
# `npm run test:cluster`: the multi-replica failover test (two edges, two billing, two crawl, NATS
# JetStream, jongodb), SIGKILLs under load. `npm test` runs it last; this runs it alone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
npm run build --silent
npx mocha "edge/test/cluster/*.cluster.ts"
