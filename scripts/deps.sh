#!/bin/sh
# Installs the Debian packages evenodds needs, only those missing. Usage: scripts/deps.sh [run|test|bench|fuzz]
set -eu
what=${1:-run}
pkgs="build-essential cmake pkg-config libmicrohttpd-dev libjansson-dev libsqlite3-dev libcurl4-openssl-dev"
case "$what" in
  run) ;;
  test) pkgs="$pkgs libcmocka-dev clang" ;;
  bench) pkgs="$pkgs libcmocka-dev wrk sqlite3 valgrind python3" ;;
  fuzz) pkgs="$pkgs libcmocka-dev clang libclang-rt-14-dev" ;;
  *) echo "usage: $0 [run|test|bench|fuzz]" >&2; exit 2 ;;
esac
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "evenodds: installing Debian packages:$missing" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >&2
