#!/usr/bin/env bash
# `npm run admin -- <command>`: the operator CLI. Builds billing (and what it imports) only when its
# entry is missing or a source it runs from is newer than its last build; everything but the
# command's own answer goes to stderr, so --json pipes.
set -euo pipefail
cd "$(dirname "$0")/.."
# The npm packages only: the CLI needs no Chromium or other system package.
bash scripts/install-deps.sh --npm-only >&2
# tsc -b rewrites billing's build info whenever billing or what it imports was rebuilt.
stamp=services/billing/tsconfig.tsbuildinfo
entry=services/billing/dist/admin.js
if [ ! -f "$entry" ] || [ ! -f "$stamp" ] ||
  [ -n "$(find proto/webutil services/kit/src services/billing/src -newer "$stamp" -print -quit)" ]; then
  echo "admin: building billing (sources changed since its last build, or it was never built)" >&2
  if [ ! -f proto/gen/descriptors.binpb ] || [ -n "$(find proto/webutil -newer proto/gen/descriptors.binpb -print -quit)" ]; then
    npm run -s codegen >&2
  fi
  # tsc -b does not notice a deleted output: without its build info, billing is compiled afresh.
  [ -f "$entry" ] || rm -f "$stamp"
  npx tsc -b services/billing >&2
  touch "$stamp"
fi
exec node "$entry" "$@"
