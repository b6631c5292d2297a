#!/bin/sh
# Service load benchmark: wrk on loopback against `evenodds serve` on a fresh SQLite database.
#   bench/service.sh [BINARY]        (default build-bench/evenodds; `make bench` builds it)
# Measures durable 12v12 round updates/s and split requests/s (N = 24, ratings from the store)
# at saturation, then the latency at half of each saturation rate (per-connection pacing).
# Environment: EO_BENCH_SECONDS (per run, default 10), EO_BENCH_CONNS (default 64).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build-bench/evenodds}
secs=${EO_BENCH_SECONDS:-10}
conns=${EO_BENCH_CONNS:-64}
command -v wrk >/dev/null || { echo "wrk is not installed (scripts/deps.sh bench)" >&2; exit 1; }
[ -x "$bin" ] || { echo "no binary at $bin (make bench)" >&2; exit 1; }

tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM

export EVENODDS_SERVER_KEY=bench-server-key-0123456789abcdef
export EVENODDS_ADMIN_KEY=bench-admin-key-0123456789abcdef
"$bin" serve --db "$tmp/bench.db" --listen 127.0.0.1:0 --log-level warn >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do grep -q listening "$tmp/out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$tmp/out")
[ -n "$url" ] || { echo "the service did not start:" >&2; cat "$tmp/err" >&2; exit 1; }

curl -sf -H "Authorization: Bearer $EVENODDS_ADMIN_KEY" -H 'Content-Type: application/json' \
  -d '{"name":"bench","model":"synelo","params":{"kmax_team":12}}' "$url/v1/pools" >/dev/null

export EO_KEY=$EVENODDS_SERVER_KEY EO_POOL=bench EO_WRK_DIR=$here/wrk
# run NAME SCRIPT CONNS PACE_MS -> "req/s p50 p99 non2xx" on stdout, wrk's text in $tmp/NAME
run() {
  EO_RUN=$1 EO_PACE_MS=$4 wrk -t1 -c"$3" -d"${secs}s" --latency -s "$here/wrk/$2" "$url" >"$tmp/$1"
  awk '/Requests\/sec/ {rps=$2}
       /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
       /Non-2xx/ {bad=$5}
       END {printf "%s %s %s %d\n", rps, p50, p99, bad}' "$tmp/$1"
}
half_pace() { awk -v c="$1" -v rps="$2" 'BEGIN {printf "%d", c * 1000 / (rps / 2)}'; }

echo "machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
echo "service: $url, SQLite WAL synchronous=NORMAL, wrk -t1, ${secs}s per run"

set -- $(run rounds-sat rounds.lua "$conns" 0)
r_sat=$1; echo "rounds  saturation: $1 req/s  p50 $2  p99 $3  non-2xx $4 ($conns connections)"
pace=$(half_pace 16 "$r_sat")
set -- $(run rounds-half rounds.lua 16 "$pace")
echo "rounds  half rate:  $1 req/s  p50 $2  p99 $3  non-2xx $4 (16 connections, ${pace} ms pacing)"

set -- $(run splits-sat splits.lua "$conns" 0)
s_sat=$1; echo "splits  saturation: $1 req/s  p50 $2  p99 $3  non-2xx $4 ($conns connections, N=24)"
pace=$(half_pace 16 "$s_sat")
set -- $(run splits-half splits.lua 16 "$pace")
echo "splits  half rate:  $1 req/s  p50 $2  p99 $3  non-2xx $4 (16 connections, ${pace} ms pacing)"

stored=$(curl -sf -H "Authorization: Bearer $EVENODDS_ADMIN_KEY" "$url/v1/pools/bench/quality" |
         sed -n 's/.*"rounds": *\([0-9]*\).*/\1/p')
echo "rounds stored in the pool: $stored"
