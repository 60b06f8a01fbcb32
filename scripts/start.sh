#!/usr/bin/env bash
# `npm start`: installs what is missing, builds, and runs the whole service on the embedded
# defaults (edge on :8080, data under ./.data).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/ensure-nats.sh || echo "NATS unavailable: services fall back to their in-process bus" >&2
npm run build --silent
exec node scripts/dist/run-local.js
