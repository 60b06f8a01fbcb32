#!/usr/bin/env bash
# Makes sure a NATS server with JetStream answers at $NATS_URL (default nats://127.0.0.1:4222):
# uses a running one, else starts Debian's nats-server (installing it when missing).
set -euo pipefail
url=${NATS_URL:-nats://127.0.0.1:4222}
hostport=${url#nats://}
host=${hostport%%:*}
port=${hostport##*:}
up() { (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; }
if up; then exit 0; fi
if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  echo "installing nats-server (Debian package)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq nats-server >/dev/null
fi
bin=$(command -v nats-server || echo /usr/sbin/nats-server)
store=${NATS_STORE_DIR:-${TMPDIR:-/tmp}/webutil-nats}
mkdir -p "$store"
nohup "$bin" -a "$host" -p "$port" -js -sd "$store" >"$store/nats.log" 2>&1 &
for _ in $(seq 1 50); do up && exit 0; sleep 0.1; done
echo "nats-server did not start; see $store/nats.log" >&2
exit 1
