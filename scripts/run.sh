#!/bin/sh
# Starts the rating service for `make run`. Usage: scripts/run.sh DB HOST:PORT
# On first start generates var/keys.env (two random 32-byte keys, hex, mode 0600) and creates
# the pool "default"; later starts reuse both.
set -eu
db=${1:?usage: scripts/run.sh DB HOST:PORT}
listen=${2:?usage: scripts/run.sh DB HOST:PORT}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${EO_BIN:-build/evenodds}
keys=var/keys.env
[ -x "$bin" ] || { echo "run.sh: $bin is missing; run 'make build' first" >&2; exit 1; }
mkdir -p var "$(dirname "$db")"

hexkey() {
  # 32 random bytes from the kernel as 64 hex digits.
  od -An -N32 -tx1 /dev/urandom | tr -d ' \n'
}

if [ ! -f "$keys" ]; then
  (
    umask 077
    tmp="$keys.tmp.$$"
    {
      echo "# evenodds service keys, generated $(date -u +%Y-%m-%dT%H:%M:%SZ). Keep this file secret."
      echo "EVENODDS_SERVER_KEY=$(hexkey)"
      echo "EVENODDS_ADMIN_KEY=$(hexkey)"
    } >"$tmp"
    chmod 600 "$tmp"
    mv "$tmp" "$keys"
  )
  echo "evenodds: generated new keys in $root/$keys (server key for game servers, admin key for you)" >&2
else
  echo "evenodds: keys in $root/$keys" >&2
fi

echo "evenodds: dashboard at http://$listen/ (reads without a key; the Key button takes the admin key)" >&2
exec "$bin" serve --db "$db" --listen "$listen" --config "$keys" --default-pool default
