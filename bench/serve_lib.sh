# Sourced by the benchmarks that start `evenodds serve` (bench_service.sh, bench_mm_http.sh,
# bench_tune.sh, service_instructions.sh), once their arguments are checked.

# The run's temporary directory $tmp, removed at exit (kept and named when KEEP_DB is set); the
# service ($pid) and a loop beside it ($beat) stopped at exit once the script sets them.
tmp=$(mktemp -d)
pid=""
beat=""
cleanup() {
  [ -n "$beat" ] && kill "$beat" 2>/dev/null || true
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  if [ -n "${KEEP_DB:-}" ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT INT TERM

# Writes $tmp/keys.env with the keys $skey and $akey (random ones where they are not set).
bench_keys() {
  hexkey() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }
  skey=${skey:-$(hexkey)}
  akey=${akey:-$(hexkey)}
  (umask 077; printf 'EVENODDS_SERVER_KEY=%s\nEVENODDS_ADMIN_KEY=%s\n' "$skey" "$akey" >"$tmp/keys.env")
}

# Waits up to TRIES tenths of a second for the service started with its output in $tmp/out and
# $tmp/err to print where it listens, and sets $url; otherwise stops the script, its error
# output named by NAME.  Usage: bench_wait_url NAME TRIES
bench_wait_url() {
  url=""
  for _ in $(seq 1 "$2"); do
    url=$(sed -n 's/^evenodds: listening on //p' "$tmp/out" 2>/dev/null || true)
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "$1: the service did not start:" >&2; cat "$tmp/err" >&2; exit 1; }
}
