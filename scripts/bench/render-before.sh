#!/usr/bin/env bash
# The render service as it was before issue 23's options (commit 545a6d3, the parent of 4dc0a7f, which added
# them), built apart, for scripts/bench/render.ts's "before" (BENCH_RENDER_BEFORE=<its dist/main.js>). With the one
# change this checkout made to how Chromium is launched (UNUSED_RENDERER_FEATURES in browser-pool.ts), so that
# before and after differ by the options' code alone. Prints the entry to pass. Usage: render-before.sh [commit] [dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
commit=${1:-545a6d3}
dir=${2:-${TMPDIR:-/tmp}/webutil-render-before}
rm -rf "$dir"
mkdir -p "$dir/node_modules/@webutil"
git archive "$commit" package.json tsconfig.base.json proto services/kit services/render | tar -x -C "$dir"
# This checkout's packages, except the workspace's own: those are the archived ones.
for entry in node_modules/* node_modules/.bin; do
  [ "$entry" = node_modules/@webutil ] || ln -s "$PWD/$entry" "$dir/$entry"
done
ln -s ../../proto "$dir/node_modules/@webutil/proto"
ln -s ../../services/kit "$dir/node_modules/@webutil/kit"
ln -s ../../services/render "$dir/node_modules/@webutil/render"
features=$(node --import tsx -e \
  "import('./services/render/src/browser-pool.ts').then((m) => console.log(m.UNUSED_RENDERER_FEATURES.join(',')))")
pool="$dir/services/render/src/browser-pool.ts"
sed -i "s/--disable-features=Translate,MediaRouter,OptimizationHints/&,$features/" "$pool"
grep -q "$features" "$pool" || { echo "render-before: the Chromium flags were not found in $pool" >&2; exit 1; }
(cd "$dir/proto" && bash ./generate.sh >/dev/null)
(cd "$dir" && node_modules/.bin/tsc -b services/render)
echo "$dir/services/render/dist/main.js"
