#!/bin/sh
# The service's instruction count (valgrind's callgrind) over one fixed request sequence: a
# SynElo pool, 300 rounds of 12v12, then 1,500 plain splits of 24 players, one kept-alive
# connection, the same bytes every run. Instructions do not depend on what else the machine is
# doing, so two builds can be compared on a shared, noisy machine where rates cannot
# (bench/README.md, "Service").
# Usage: [ROUNDS=300] [SPLITS=1500] bench/service_instructions.sh [BIN...]
#        (default build-bench/evenodds; ROUNDS=2000 SPLITS=0 isolates the rounds' path)
# Prints per binary: total instructions, per request, and the ten costliest functions (self).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$root/build-bench/evenodds"
for tool in valgrind callgrind_annotate python3; do
  command -v $tool >/dev/null || { echo "service_instructions: $tool is missing (scripts/deps.sh bench)" >&2; exit 1; }
done
. "$root/bench/serve_lib.sh"
skey=sk0123456789abcdef0123456789abcdef
akey=ak0123456789abcdef0123456789abcdef
bench_keys

for bin in "$@"; do
  [ -x "$bin" ] || { echo "service_instructions: $bin is missing (make bench)" >&2; exit 1; }
  rm -f "$tmp"/db* "$tmp/out"
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$bin" serve --db "$tmp/db" \
    --listen 127.0.0.1:0 --config "$tmp/keys.env" --log-level warn >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  bench_wait_url "service_instructions: $bin" 300
  python3 - "$url" "$akey" "$skey" "${ROUNDS:-300}" "${SPLITS:-1500}" <<'PY'
import http.client, json, random, sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port)
def post(path, body, key):
    c.request("POST", path, body=json.dumps(body),
              headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    if r.status not in (200, 201):
        sys.exit("service_instructions: %s answered %d" % (path, r.status))
post("/v1/pools", {"name": "b", "model": "synelo", "params": {"kmax_team": 12}}, sys.argv[2])
rnd = random.Random(5)
for i in range(int(sys.argv[4])):
    ids = rnd.sample(range(2000), 24)
    post("/v1/pools/b/rounds", {"id": "r%d" % i, "winner": rnd.choice("AB"),
         "A": ["p%d" % j for j in ids[:12]], "B": ["p%d" % j for j in ids[12:]]}, sys.argv[3])
for i in range(int(sys.argv[5])):
    post("/v1/pools/b/splits", {"players": ["p%d" % j for j in rnd.sample(range(2000), 24)]},
         sys.argv[3])
PY
  kill -TERM "$pid"
  wait "$pid" || true
  pid=""
  total=$(callgrind_annotate "$tmp/cg.out" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
  n=$((${ROUNDS:-300} + ${SPLITS:-1500}))
  echo "$bin: $total instructions, $((total / n)) per request ($n requests, start and stop included)"
  callgrind_annotate "$tmp/cg.out" 2>/dev/null | grep -v 'PROGRAM TOTALS' | grep -E '^ *[0-9,]+ \(' | head -10 | sed 's/^/  /'
done
