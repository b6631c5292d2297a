#!/bin/sh
# Matchmaking over HTTP, end to end (docs/MATCHMAKING.md "Performance"): wrk files tickets
# (one new player each) into a queue of TEAM_SIZE-a-side teams with the default windows and a
# pass every INTERVAL_MS; one instance with room for every session takes the matches. The
# tickets' own timestamps (the service's clock, ms) then tell, for every ticket, when it was
# created and when it was assigned: printed are tickets created per second (wrk), tickets
# assigned per second (first creation to last assignment), the creation requests' p50/p99,
# creation-to-assignment p50/p99/max, and the service's CPU time per ticket (utime + stime from
# /proc around the run: steadier than the rates when other work shares the cores) — first at
# saturation, then paced at half that rate.
# Usage: bench/bench_mm_http.sh [BIN]   (default build-bench/evenodds, from `make bench`)
# Environment: DURATION (seconds per run, 10), CONNS (64), TEAM_SIZE (2), INTERVAL_MS (50),
# WRK_THREADS (1), HTTP_THREADS (service threads, default = cores).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build-bench/evenodds}
dur=${DURATION:-10}
conns=${CONNS:-64}
team=${TEAM_SIZE:-2}
interval=${INTERVAL_MS:-50}
wthreads=${WRK_THREADS:-1}
for tool in wrk sqlite3 curl; do
  command -v $tool >/dev/null || { echo "bench_mm_http: $tool is missing (scripts/deps.sh bench)" >&2; exit 1; }
done
[ -x "$bin" ] || { echo "bench_mm_http: $bin is missing (make bench)" >&2; exit 1; }

. "$root/bench/serve_lib.sh"

bench_keys
set -- serve --db "$tmp/bench.db" --listen 127.0.0.1:0 --config "$tmp/keys.env" --log-level warn \
  --max-conns-per-address 0 # wrk, the instance and the lobby all come from 127.0.0.1
[ -n "${HTTP_THREADS:-}" ] && set -- "$@" --threads "$HTTP_THREADS"
"$bin" "$@" >"$tmp/out" 2>"$tmp/err" &
pid=$!
bench_wait_url bench_mm_http 100

post() { # post KEY PATH BODY
  curl -sf -o /dev/null -H "Authorization: Bearer $1" -H 'Content-Type: application/json' -d "$3" "$url$2"
}
post "$akey" /v1/pools '{"name":"bench","model":"synelo"}'
post "$akey" /v1/queues "{\"name\":\"bench\",\"pool\":\"bench\",\"team_size\":$team,\"interval_ms\":$interval}"
itoken=$(curl -sf -H "Authorization: Bearer $skey" -H 'Content-Type: application/json' \
  -d '{"id":"bench-1","queues":["bench"],"address":"127.0.0.1:27015","capacity":1000000}' \
  "$url/v1/instances" | sed 's/.*"token":"\([0-9a-f]*\)".*/\1/')
# the instance heartbeats (else it is lost after 10 s); every 3 s, since its answer lists up to
# 1024 of its sessions, which this instance never closes
(while kill -0 "$pid" 2>/dev/null; do
   curl -s -o /dev/null -X POST -H "Authorization: Bearer $itoken" "$url/v1/instances/bench-1/heartbeat"
   sleep 3
 done) &
beat=$!

export EO_WRK_DIR="$root/bench/wrk" EO_KEY="$skey" EO_QUEUE=bench

# run RATE [SERVICE_MS]: "created/s p50 p99 non2xx assigned/s a_p50 a_p99 a_max
# assigned/created cpu_us" for one wrk run of new tickets (RATE 0: flat out), read back from the
# store.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

run() {
  tag="r$(date +%s%N)"
  c0=$(cpu_ticks)
  EO_RATE=$1 EO_CONNS=$conns EO_SERVICE_MS=${2:-0} EO_RUN="$tag" wrk -t"$wthreads" -c"$conns" -d"${dur}s" --latency \
    -s "$root/bench/wrk/tickets.lua" "$url" >"$tmp/wrk.txt" 2>&1 || { cat "$tmp/wrk.txt" >&2; exit 1; }
  sleep $(awk -v i="$interval" 'BEGIN {printf "%.2f", 3 * i / 1000 + 1.5}') # the last passes
  c1=$(cpu_ticks)
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk.txt")
  errs=$(awk '/Non-2xx/ {print $5}' "$tmp/wrk.txt")
  grep -E "^tickets: HTTP" "$tmp/wrk.txt" >&2 || true
  sqlite3 -readonly "$tmp/bench.db" \
    "SELECT updated_at - created_at, status, created_at, updated_at FROM mm_objects WHERE kind = 1 AND name LIKE '$tag-%' ORDER BY 1" |
    awk -F'|' -v rps="$rps" -v p50="$p50" -v p99="$p99" -v errs="${errs:-0}" \
        -v cpu="$(awk -v a="$c0" -v b="$c1" -v t="$(getconf CLK_TCK)" 'BEGIN {print (b - a) / t}')" '
      { n++; if ($2 == "assigned") { a[++k] = $1; if (first == "" || $3 < first) first = $3;
                                     if ($4 > last) last = $4 } }
      END { if (k == 0) { print rps, p50, p99, errs, 0, "-", "-", "-", "0/" n, 0; exit }
            secs = (last - first) / 1000; if (secs <= 0) secs = 1
            i50 = int(k * 0.5) + 1; if (i50 > k) i50 = k
            i99 = int(k * 0.99) + 1; if (i99 > k) i99 = k
            printf "%s %s %s %s %.0f %dms %dms %dms %d/%d %.0f\n", rps, p50, p99, errs, k / secs,
                   a[i50], a[i99], a[k], k, n, cpu * 1e6 / n }'
}

echo "service: $bin  wrk: $wthreads thread(s), $conns connections, ${dur}s per run; queue ${team}v$team, a pass every ${interval} ms"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
set -- $(run 0)
sat=$1
printf 'saturation:  created %8.0f/s (p50 %s, p99 %s, non-2xx %s)  assigned %6s/s  created->assigned p50 %s p99 %s max %s  (%s)  service CPU %s us/ticket\n' "$@"
half=$(awk -v r="$sat" 'BEGIN {printf "%d", r / 2}')
# wrk paces by waiting between one connection's requests, so the first paced run falls short by
# the service time; it is measured there and subtracted in the run that counts.
set -- $(run "$half")
svc=$(awk -v c="$conns" -v got="$1" -v want="$half" \
      'BEGIN {s = c * 1000 / got - c * 1000 / want; printf "%.2f", (s > 0 ? s : 0)}')
set -- $(run "$half" "$svc")
printf 'at %6d/s:  created %8.0f/s (p50 %s, p99 %s, non-2xx %s)  assigned %6s/s  created->assigned p50 %s p99 %s max %s  (%s)  service CPU %s us/ticket\n' "$half" "$@"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
