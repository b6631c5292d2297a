#!/bin/sh
# Checks that CTest runs on every build (see tests/CMakeLists.txt):
#   scripts/lint.sh clang   every .c of ours compiles warning-free under clang too
#   scripts/lint.sh banned  no unbounded or unchecked libc calls in our code
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
files=$(find src tests bench fuzz -name '*.c' | sort)
case "${1:-}" in
clang)
    command -v clang >/dev/null || { echo "clang not installed (scripts/deps.sh test)"; exit 1; }
    flags="-std=c17 -Wall -Wextra -Wpedantic -Wshadow -Werror -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE"
    incs="-Iinclude -Isrc -Itests/lib $(pkg-config --cflags jansson sqlite3 libmicrohttpd cmocka libcurl)"
    n=0
    for f in $files; do
        # shellcheck disable=SC2086
        clang $flags $incs -fsyntax-only "$f"
        n=$((n + 1))
    done
    echo "clang: $n files compile with -Werror"
    ;;
banned)
    bad=$(grep -nE '\b(strcpy|strcat|sprintf|vsprintf|gets|atoi|atol|atof|strtok)[[:space:]]*\(' $files || true)
    if [ -n "$bad" ]; then
        echo "banned calls (use snprintf, memcpy with bounds, strtol/strtod with checks):"
        echo "$bad"
        exit 1
    fi
    echo "banned: none in $(echo "$files" | wc -l) files"
    ;;
*)
    echo "usage: $0 clang|banned" >&2
    exit 2
    ;;
esac
