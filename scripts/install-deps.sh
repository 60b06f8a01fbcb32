#!/usr/bin/env bash
# Installs the npm dependencies when node_modules is missing or older than the lock file.
set -euo pipefail
cd "$(dirname "$0")/.."
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then echo "Node 20 or newer is required (found $(node -v))" >&2; exit 1; fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
