#!/usr/bin/env bash
# Closed loop (docs/SIM.md "Closed loop for balancing"): every model with parameters chosen for balancing (not for log
# loss), in closed loop with our balancer, without and with the pool's map bias (bias=map: the
# model learns each map's bias and the balancer evens the teams with it); the first window from which the Brier stays in
# 0.25 ± 0.01 and the stomp share (P_true > 0.8 or < 0.2) under 5 %, in rounds and rounds per
# player, and the last window's figures. docs/SIM.md, "Closed loop for balancing", has the
# table, the machine and why each parameter was chosen. Builds nothing: it runs an evenodds
# binary (default build-bench/evenodds, from `make bench`). Needs bash and jq.
#
#   bench/balancing.sh [EVENODDS]        # ~5 minutes on one core
#
# Environment: B_ROUNDS [240000] rounds per run, B_EVERY [5000] rounds per window, B_SEED [8].
set -euo pipefail

EO=${1:-build-bench/evenodds}
ROUNDS=${B_ROUNDS:-240000}
EVERY=${B_EVERY:-5000}
SEED=${B_SEED:-8}
[ -x "$EO" ] || { echo "balancing.sh: no executable '$EO' (run make bench first)" >&2; exit 2; }
command -v jq >/dev/null || { echo "balancing.sh: needs jq" >&2; exit 2; }

# The worlds: d12 is the sim's default 12v12 (skill mean 0: a late joiner costs his team
# nothing on average); w6 a 6v6 where absence costs (skill mean 100) with more partial play
# and larger map biases, the `w6` of bench/quality.sh.
world_opts() {
    case $1 in
    d12) echo "--team 12 --players 500 --partial 100 --maps 8 --bias 0.3 --skill-mean 0" ;;
    w6) echo "--team 6 --players 300 --partial 150 --maps 8 --bias 0.5 --skill-mean 100" ;;
    esac
}

# row WORLD TEAM PLAYERS MODEL [NAME=VALUE...]
row() {
    local w=$1 team=$2 players=$3 m=$4
    shift 4
    local p="" kv
    for kv in "$@"; do p="$p --param $kv"; done
    # shellcheck disable=SC2046,SC2086
    "$EO" sim --seed "$SEED" --rounds "$ROUNDS" $(world_opts "$w") --model "$m" $p \
        --balancer ours --report-every "$EVERY" --format json |
    jq -rs --arg w "$w" --arg m "$m" --arg p "${*:-defaults}" --argjson k "$team" \
        --argjson n "$players" '
        (map(select(.span == "window"))) as $win
        | ($win | length) as $len
        | ([range(0; $len) | select(. as $i | $win[$i:] | all(.brier >= 0.24 and .brier <= 0.26
                                                            and .stomps < 0.05))] | first) as $c
        | ($win[-1]) as $last
        | "| \($w) | \($m) | `\($p)` | "
          + (if $c == null then "not within \($win[-1].to) rounds"
             else "\($win[$c].from - 1) (\((($win[$c].from - 1) * 2 * $k / $n) | round))" end)
          + " | \($last.brier * 1000 | round / 1000) | \($last.stomps * 1000 | round / 10) %"
          + " | \($last.spearman * 1000 | round / 1000) | \(map(select(.span == "all"))[0].inexact) |"'
}

T0=$(date +%s)
echo "| world | model | parameters | converged from round (rounds per player) | Brier, last window | stomps, last window | Spearman | inexact rounds |"
echo "|---|---|---|---|---|---|---|---|"
# d12 without the pool's map bias; w6 without and with it (bias=map: the model learns each
# map's bias and the balancer evens the teams with it; at 12v12 a split with a field takes
# the balancer's general path, ~2.6 ms a round, too slow for 240,000 rounds here).
for wb in d12:off w6:off w6:map; do
    w=${wb%%:*} bias=${wb##*:}
    if [ "$w" = d12 ]; then k=12 n=500; else k=6 n=300; fi
    row $w $k $n synelo k_max=4 k_min=1 bias=$bias
    row $w $k $n elo k=4 bias=$bias
    row $w $k $n glicko2 team_expectation=1 vol0=0.03 tau=0.2 bias=$bias
    row $w $k $n trueskill beta=21.6 tau=0.05 bias=$bias
    row $w $k $n wenglin beta=23 tau=0.05 bias=$bias
    row $w $k $n hive alpha=1.5 bias=$bias
done
# For contrast: the defaults that do not converge (SynElo's K range; Glicko-2's composite
# opponent, which compresses ratings once the teams are even).
row d12 12 500 synelo
row d12 12 500 glicko2
echo
echo "($ROUNDS rounds per run, windows of $EVERY, seed $SEED; $(( $(date +%s) - T0 )) s on" \
     "$(lscpu | sed -n 's/^Model name: *//p' | head -1), load $(uptime | sed 's/.*load average: //'))"
