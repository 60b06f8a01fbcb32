#!/usr/bin/env bash
# `npm run bench`: every benchmark, each printing ratios against a baseline measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/ensure-nats.sh
npm run build --silent
node --import tsx scripts/bench/foundation.ts
node --import tsx scripts/bench/quota.ts
node --import tsx scripts/bench/hot-account.ts
node --import tsx scripts/bench/crawl.ts
node --import tsx scripts/bench/docs-crawl.ts
node --import tsx scripts/bench/debian-docs.ts
node --import tsx scripts/bench/site-audit.ts
node --import tsx scripts/bench/scans.ts
node --import tsx scripts/bench/hostile.ts
node --import tsx scripts/bench/bookmark.ts
node --import tsx scripts/bench/render.ts
node --import tsx scripts/bench/fair-share.ts
node --import tsx scripts/bench/transport.ts
node --import tsx scripts/bench/website.ts
node --import tsx scripts/bench/monitors.ts
