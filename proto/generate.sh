#!/usr/bin/env bash
# Generates TypeScript (ts-proto, grpc-js services) for every service contract into gen/,
# plus google.rpc.Status/ErrorInfo, which carry error reasons in grpc-status-details-bin, and a descriptor set.
set -euo pipefail
cd "$(dirname "$0")"
gp=$(node -e "console.log(require('path').dirname(require.resolve('google-proto-files/package.json')))")
rm -rf third_party gen
mkdir -p third_party/google/rpc
cp "$gp/google/rpc/status.proto" "$gp/google/rpc/error_details.proto" third_party/google/rpc/
buf=../node_modules/.bin/buf
"$buf" lint --path webutil
"$buf" generate
# The descriptor set from which each service also serves the Connect protocol (JSON and binary over HTTP/1.1).
"$buf" build --as-file-descriptor-set -o gen/descriptors.binpb
# Each message's fields and each enum's REST values, from which the edge builds the REST contract.
node write-fields.mjs
