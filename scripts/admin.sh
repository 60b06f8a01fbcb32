#!/usr/bin/env bash
# `npm run admin -- <command>`: the operator CLI. Builds only when a source it runs from is newer
# than its last build; everything but the command's own answer goes to stderr, so --json pipes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >&2
# tsc -b rewrites billing's build info whenever billing or what it imports was rebuilt.
stamp=services/billing/tsconfig.tsbuildinfo
if [ ! -f "$stamp" ] || [ -n "$(find proto/webutil services/kit/src services/billing/src -newer "$stamp" -print -quit)" ]; then
  echo "admin: building (sources changed since the last build)" >&2
  npm run build --silent >&2
  touch "$stamp"
fi
exec node services/billing/dist/admin.js "$@"
