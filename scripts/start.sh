#!/usr/bin/env bash
# `npm start`: installs what is missing, builds, and runs the whole service on the embedded
# defaults (edge on :8080, data under ./.data).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Crawl jobs travel over NATS JetStream when it runs (so a restarted crawl service picks them
# up again); without it the crawl service uses its in-process bus.
if bash scripts/ensure-nats.sh; then
  export NATS_URL=${NATS_URL:-nats://127.0.0.1:4222}
else
  echo "NATS unavailable: the crawl service uses its in-process bus" >&2
fi
npm run build --silent
exec node scripts/dist/run-local.js "$@"
