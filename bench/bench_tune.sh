#!/bin/sh
# A pool's re-tune through the service (docs/SERVICE.md "Tuning a pool"): a simulated 12v12
# log imported into a TrueSkill pool, POST …/tune with a small budget, its job timed to done,
# then POST …/tune/apply timed (the writer folds the whole log again under the new parameters
# and rewrites every row; nothing else is written meanwhile), beside `evenodds replay` of the
# same log (the fold alone, from a file). Prints one line each.
# Usage: bench/bench_tune.sh [BIN]   (default build-bench/evenodds, from `make bench`)
# Environment: ROUNDS (rounds in the pool, 200000), PLAYERS (2000), BUDGET (tune folds, 6).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build-bench/evenodds}
rounds=${ROUNDS:-200000}
players=${PLAYERS:-2000}
budget=${BUDGET:-6}
[ -x "$bin" ] || { echo "bench_tune: $bin is missing (make bench)" >&2; exit 1; }

. "$root/bench/serve_lib.sh"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }

echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" sim --seed 3 --rounds "$rounds" --players "$players" --balancer random \
  --rounds-out "$tmp/log.jsonl" >/dev/null
"$bin" import --db "$tmp/bench.db" --pool w --create --model trueskill "$tmp/log.jsonl" >/dev/null
t=$(now)
"$bin" replay --model trueskill "$tmp/log.jsonl" >/dev/null
echo "replay of $rounds rounds: $(since "$t") s"

bench_keys
"$bin" serve --db "$tmp/bench.db" --listen 127.0.0.1:0 --config "$tmp/keys.env" \
  --log-level warn >"$tmp/out" 2>"$tmp/err" &
pid=$!
bench_wait_url bench_tune 6000
auth="Authorization: Bearer $akey"

t=$(now)
curl -sf -o /dev/null -H "$auth" -H 'Content-Type: application/json' \
  -d "{\"budget\":$budget}" "$url/v1/pools/w/tune"
while curl -sf -H "$auth" "$url/v1/pools/w/tune" | grep -q '"state":"running"'; do sleep 0.5; done
job=$(curl -sf -H "$auth" "$url/v1/pools/w/tune")
folds=$(echo "$job" | sed -n 's/.*"tune":{"knobs":\[[^]]*\],"folds":\([0-9]*\).*/\1/p')
chosen=$(echo "$job" | sed -n 's/.*"chosen":"\([a-z]*\)".*/\1/p')
echo "tune of $rounds rounds: $(since "$t") s, $folds folds, chosen: $chosen"
if [ "$chosen" = best ]; then
  t=$(now)
  curl -sf -o /dev/null -X POST -H "$auth" "$url/v1/pools/w/tune/apply"
  echo "apply (the writer's fold of $rounds rounds, $players rows): $(since "$t") s"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
