#!/bin/sh
# Service load test with wrk (Debian package) on loopback: durable 12v12 round updates/s and
# split requests/s (N = 24), each first at saturation, then paced at half that rate for p99.
# Usage: bench/bench_service.sh [BIN]   (default build-bench/evenodds, from `make bench`)
# Environment: DURATION (seconds per run, 10), CONNS (64 at saturation), HALF_CONNS (64 at half
# rate: many connections each waiting long keep wrk's 1 ms timer granularity small),
# WRK_THREADS (1; wrk shares the 2 cores), HTTP_THREADS (service threads, default = cores).
# The paced line prints the rate asked for and the rate reached: wrk paces each connection by
# waiting between requests (it has no open-loop mode), so it can fall short of the target.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build-bench/evenodds}
dur=${DURATION:-10}
conns=${CONNS:-64}
wthreads=${WRK_THREADS:-1}
half_conns=${HALF_CONNS:-64}
command -v wrk >/dev/null || { echo "bench_service: wrk is missing (apt-get install wrk)" >&2; exit 1; }
[ -x "$bin" ] || { echo "bench_service: $bin is missing (make bench)" >&2; exit 1; }

tmp=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

hexkey() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }
skey=$(hexkey)
akey=$(hexkey)
(umask 077; printf 'EVENODDS_SERVER_KEY=%s\nEVENODDS_ADMIN_KEY=%s\n' "$skey" "$akey" >"$tmp/keys.env")

set -- serve --db "$tmp/bench.db" --listen 127.0.0.1:0 --config "$tmp/keys.env" --log-level warn
[ -n "${HTTP_THREADS:-}" ] && set -- "$@" --threads "$HTTP_THREADS"
"$bin" "$@" >"$tmp/out" 2>"$tmp/err" &
pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's/^evenodds: listening on //p' "$tmp/out" 2>/dev/null || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "bench_service: the service did not start:" >&2; cat "$tmp/err" >&2; exit 1; }

curl -sf -o /dev/null -H "Authorization: Bearer $akey" -H 'Content-Type: application/json' \
  -d '{"name":"bench","model":"synelo","params":{"kmax_team":12}}' "$url/v1/pools"

export EO_WRK_DIR="$root/bench/wrk" EO_KEY="$skey"

# run SCRIPT RATE CONNS [SERVICE_MS]: prints "rate p50 p99 non2xx" (requests/s, milliseconds).
run() {
  EO_RATE=$2 EO_CONNS=$3 EO_SERVICE_MS=${4:-0} EO_RUN="r$(date +%s%N)" wrk -t"$wthreads" -c"$3" -d"${dur}s" --latency \
    -s "$root/bench/wrk/$1.lua" "$url" >"$tmp/wrk.txt" 2>&1 || { cat "$tmp/wrk.txt" >&2; exit 1; }
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk.txt")
  errs=$(awk '/Non-2xx/ {print $5}' "$tmp/wrk.txt")
  grep -E "^(rounds|splits): HTTP" "$tmp/wrk.txt" >&2 || true
  echo "$rps $p50 $p99 ${errs:-0}"
}

echo "service: $bin  wrk: $wthreads thread(s), $conns connections ($half_conns paced at half rate), ${dur}s per run"
for what in rounds splits; do
  set -- $(run "$what" 0 "$conns")
  sat=$1
  printf '%-7s saturation: %10.0f req/s  p50 %-8s p99 %-8s non-2xx %s\n' "$what" "$1" "$2" "$3" "$4"
  half=$(awk -v r="$sat" 'BEGIN {printf "%d", r / 2}')
  # wrk paces by waiting between one connection's requests, so the first paced run falls short
  # by the service time; measure it there and subtract it in the run that counts.
  set -- $(run "$what" "$half" "$half_conns")
  svc=$(awk -v c="$half_conns" -v got="$1" -v want="$half" \
        'BEGIN {s = c * 1000 / got - c * 1000 / want; printf "%.2f", (s > 0 ? s : 0)}')
  set -- $(run "$what" "$half" "$half_conns" "$svc")
  printf '%-7s at %6d/s:  %10.0f req/s  p50 %-8s p99 %-8s non-2xx %s\n' "$what" "$half" "$1" "$2" "$3" "$4"
done
rounds=$(curl -sf -H "Authorization: Bearer $akey" "$url/v1/pools/bench/quality")
echo "pool after the runs: $rounds"
