#!/bin/sh
# Service load test with wrk (Debian package) on loopback: durable 12v12 round updates/s and
# split requests/s (N = 24), each first at saturation, then paced at half that rate for p99.
# Usage: bench/bench_service.sh [BIN]   (default build-bench/evenodds, from `make bench`)
# Saturation lines also print the service's CPU time per request (utime + stime from /proc
# around the run): steadier than the rates when other work shares the cores.
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

. "$root/bench/serve_lib.sh"

bench_keys

set -- serve --db "$tmp/bench.db" --listen 127.0.0.1:0 --config "$tmp/keys.env" --log-level warn
[ -n "${HTTP_THREADS:-}" ] && set -- "$@" --threads "$HTTP_THREADS"
"$bin" "$@" >"$tmp/out" 2>"$tmp/err" &
pid=$!
bench_wait_url bench_service 100

curl -sf -o /dev/null -H "Authorization: Bearer $akey" -H 'Content-Type: application/json' \
  -d '{"name":"bench","model":"synelo","params":{"kmax_team":12}}' "$url/v1/pools"

export EO_WRK_DIR="$root/bench/wrk" EO_KEY="$skey"

# The service's CPU time so far (utime + stime, clock ticks).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

# run SCRIPT RATE CONNS [SERVICE_MS]: prints "rate p50 p99 non2xx cpu" (requests/s,
# milliseconds, and the service's CPU microseconds per request over the run).
run() {
  c0=$(cpu_ticks)
  EO_RATE=$2 EO_CONNS=$3 EO_SERVICE_MS=${4:-0} EO_RUN="r$(date +%s%N)" wrk -t"$wthreads" -c"$3" -d"${dur}s" --latency \
    -s "$root/bench/wrk/$1.lua" "$url" >"$tmp/wrk.txt" 2>&1 || { cat "$tmp/wrk.txt" >&2; exit 1; }
  c1=$(cpu_ticks)
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk.txt")
  errs=$(awk '/Non-2xx/ {print $5}' "$tmp/wrk.txt")
  cpu=$(awk -v a="$c0" -v b="$c1" -v t="$(getconf CLK_TCK)" -v n="$(awk '/requests in/ {print $1}' "$tmp/wrk.txt")" \
        'BEGIN {printf "%.0f", (n > 0 ? (b - a) / t * 1e6 / n : 0)}')
  grep -E "^(rounds|splits): HTTP" "$tmp/wrk.txt" >&2 || true
  echo "$rps $p50 $p99 ${errs:-0} $cpu"
}

echo "service: $bin  wrk: $wthreads thread(s), $conns connections ($half_conns paced at half rate), ${dur}s per run"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for what in rounds splits; do
  set -- $(run "$what" 0 "$conns")
  sat=$1
  printf '%-7s saturation: %10.0f req/s  p50 %-8s p99 %-8s non-2xx %s  service CPU %s us/req\n' \
    "$what" "$1" "$2" "$3" "$4" "$5"
  half=$(awk -v r="$sat" 'BEGIN {printf "%d", r / 2}')
  # wrk paces by waiting between one connection's requests, so the first paced run falls short
  # by the service time; measure it there and subtract it in the run that counts.
  set -- $(run "$what" "$half" "$half_conns")
  svc=$(awk -v c="$half_conns" -v got="$1" -v want="$half" \
        'BEGIN {s = c * 1000 / got - c * 1000 / want; printf "%.2f", (s > 0 ? s : 0)}')
  set -- $(run "$what" "$half" "$half_conns" "$svc")
  printf '%-7s at %6d/s:  %10.0f req/s  p50 %-8s p99 %-8s non-2xx %s\n' "$what" "$half" "$1" "$2" "$3" "$4"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
rounds=$(curl -sf -H "Authorization: Bearer $akey" "$url/v1/pools/bench/quality")
echo "pool after the runs: $rounds"
