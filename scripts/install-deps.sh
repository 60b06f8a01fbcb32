#!/usr/bin/env bash
# Installs the npm dependencies when node_modules is missing or older than the lock file, and (unless
# --npm-only) the Debian packages when missing: what the render service needs (Chromium, fonts for CJK and emoji),
# curl and jq, which the README's examples (run by the tests) use, and testssl.sh, the SSL scan's reference.
set -euo pipefail
cd "$(dirname "$0")/.."
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then echo "Node 20 or newer is required (found $(node -v))" >&2; exit 1; fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # Exactly what the lock lists (it names every platform's optional packages, Biome's included).
  npm ci --no-audit --no-fund
fi
# --npm-only (the operator CLI): no system packages.
[ "${1:-}" = "--npm-only" ] && exit 0
# webext-ublock-origin-chromium: EasyList and EasyPrivacy, the render service's blockAds lists.
# testssl.sh: the SSL scan's verdicts are compared with its JSON, and `npm run bench` times it.
packages="chromium fonts-noto-cjk fonts-noto-color-emoji webext-ublock-origin-chromium curl jq testssl.sh"
missing=$(for p in $packages; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  echo "installing $(echo $missing) (Debian packages)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
