#!/usr/bin/env bash
# Quality figures on simulated worlds (bench/README.md, "Quality"): held-out log
# loss of every model, online and refit, with and without the map bias, beside the oracle's
# (the true skills); hive and TrueSkill also without time weights; then every model in closed
# loop with our balancer. Three worlds: w12 (12v12) and w6 (6v6) with skill mean Q_SKILL_MEAN,
# partial play Q_PARTIAL and map bias Q_BIAS; d12, 12v12 with the sim's defaults (skill mean 0,
# partial 100 per mille, bias 0.3), the world of docs/SIM.md's first closed-loop table. Builds nothing: it runs an evenodds binary (default
# build-bench/evenodds, from `make bench`). Needs bash, jq and awk. Prints markdown tables.
#
#   bench/quality.sh [EVENODDS]          # ~12 minutes on 2 cores (one is used)
#
# Sizes can be changed through the environment (defaults in brackets): Q_SEED [7],
# Q_ROUNDS [40000] rounds per world of random teams, Q_LOOP_ROUNDS [60000] closed-loop rounds,
# Q_BUDGET [40] tune's folds, Q_BIAS [0.5] map bias (logits), Q_PARTIAL [150] per mille,
# Q_SKILL_MEAN [100] mean true skill (above 0, a present player adds to his team, so partial
# play matters in the truth; docs/SIM.md), Q_WORK_LIMIT [100000] the closed loop's exact-split
# nodes per round before local search (ties of young ratings can cost 10^7 nodes a round),
# Q_DIR [a new temporary directory] where the logs, truths and JSON answers are kept.
set -euo pipefail

EO=${1:-build-bench/evenodds}
SEED=${Q_SEED:-7}
ROUNDS=${Q_ROUNDS:-40000}
LOOP_ROUNDS=${Q_LOOP_ROUNDS:-60000}
SKILL_MEAN=${Q_SKILL_MEAN:-100}
WORK_LIMIT=${Q_WORK_LIMIT:-100000}
BUDGET=${Q_BUDGET:-40}
BIAS=${Q_BIAS:-0.5}
PARTIAL=${Q_PARTIAL:-150}
DIR=${Q_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/eo-quality.XXXXXX")}
MODELS="synelo trueskill glicko2 elo wenglin hive"
# The held-out share: tune --eval-from 0.7 trains on [0.1, 0.7) and holds out the rest; eval
# --eval-from 0.7 and fit --holdout 0.3 score the same last 30 % of each log.
HOLD=0.3
FROM=0.7

[ -x "$EO" ] || { echo "quality.sh: no executable '$EO' (run make bench first)" >&2; exit 2; }
command -v jq >/dev/null || { echo "quality.sh: needs jq" >&2; exit 2; }
mkdir -p "$DIR"

# The world options of each world: w12 and w6 (with their team size), d12.
world_opts() {
    case $1 in
    w12) echo "--team 12 --partial $PARTIAL --maps 8 --bias $BIAS --skill-mean $SKILL_MEAN" ;;
    w6) echo "--team 6 --partial $PARTIAL --maps 8 --bias $BIAS --skill-mean $SKILL_MEAN" ;;
    d12) echo "--team 12 --partial 100 --maps 8 --bias 0.3 --skill-mean 0" ;;
    esac
}

# world NAME PLAYERS: a log of random teams (ratings see varied teams) and its truth.
world() {
    # shellcheck disable=SC2046 # the options are a list of arguments
    "$EO" sim --seed "$SEED" --rounds "$ROUNDS" --players "$2" $(world_opts "$1") \
        --balancer random --report-every 0 --format json --rounds-out "$DIR/$1.jsonl" \
        --truth-out "$DIR/$1.json" >"$DIR/$1.sim.json"
}

# params FILE: the knobs of the configuration tune chose (its --report) as --param arguments.
params() {
    jq -r '(if .chosen == "best" then .best else .start end).params | to_entries
           | map("--param \(.key)=\(.value)") | join(" ")' "$1"
}

# variant WORLD MODEL LABEL [OPTIONS...]: tune on the training prefix, then the held-out log
# loss online (eval) and refit (fit), with the oracle's from the truth. One table row.
variant() {
    local w=$1 m=$2 label=$3
    shift 3
    local tag="$w.$m.$label"
    "$EO" tune --model "$m" "$@" --budget "$BUDGET" --eval-from "$FROM" \
        --report "$DIR/$tag.tune.json" --format json "$DIR/$w.jsonl" >"$DIR/$tag.config.json" \
        2>/dev/null
    local p
    p=$(params "$DIR/$tag.tune.json")
    # shellcheck disable=SC2086 # $p is a list of arguments
    "$EO" eval --model "$m" "$@" $p --eval-from "$FROM" --truth "$DIR/$w.json" --format json \
        "$DIR/$w.jsonl" >"$DIR/$tag.eval.json"
    # shellcheck disable=SC2086
    "$EO" fit --model "$m" "$@" $p --holdout "$HOLD" --truth "$DIR/$w.json" --format json \
        "$DIR/$w.jsonl" >"$DIR/$tag.fit.json" 2>/dev/null
    local online refit oracle
    online=$(jq -r '.logloss' "$DIR/$tag.eval.json")
    oracle=$(jq -r '.oracle.logloss' "$DIR/$tag.eval.json")
    refit=$(jq -r '.holdout.refit.logloss' "$DIR/$tag.fit.json")
    awk -v w="$w" -v m="$m" -v l="$label" -v on="$online" -v rf="$refit" -v or="$oracle" \
        -v p="${p//--param /}" 'BEGIN {
            best = on < rf ? on : rf
            printf "| %s | %s | %s | %.4f | %.4f | %.4f | %+.1f %% | `%s` |\n",
                   w, m, l, on, rf, or, 100 * (best / or - 1), p }'
    echo "$p" >"$DIR/$tag.params"
}

# loop WORLD TEAM PLAYERS MODEL [LABEL NAME=VALUE...]: closed loop with our balancer and the
# model's parameters tuned (time weights, no bias) on the log of world WORLD, then the
# NAME=VALUE overrides; the same world's options, another seed and PLAYERS players; one row.
loop() {
    local w=$1 team=$2 players=$3 m=$4 label=${5:-$4}
    shift 4
    [ $# -gt 0 ] && shift
    local p
    p=$(cat "$DIR/$w.$m.weights.params")
    for kv in "$@"; do p="$p --param $kv"; done
    # shellcheck disable=SC2086,SC2046
    "$EO" sim --seed "$((SEED + 1))" --rounds "$LOOP_ROUNDS" --players "$players" \
        $(world_opts "$w") --model "$m" $p --balancer ours --work-limit "$WORK_LIMIT" \
        --report-every 10000 --format json >"$DIR/$w.$label.loop.json"
    # The first window from which every later window has Brier in 0.25 +- 0.01 and stomps
    # under 5 %; rounds per player at its start = rounds so far * 2 * team / players.
    jq -rs --arg w "$w" --arg m "$label" --argjson k "$team" --argjson n "$players" '
        (map(select(.span == "window"))) as $win
        | ($win | length) as $len
        | ([range(0; $len) | select(. as $i | $win[$i:] | all(.brier >= 0.24 and .brier <= 0.26
                                                            and .stomps < 0.05))] | first) as $c
        | ($win[-1]) as $last
        | "| \($w) | \($m) | "
          + ($win | map("\(.brier * 10000 | round / 10000) / \(.stomps * 1000 | round / 10)")
                  | join(" · "))
          + " | " + (if $c == null then "not within the run"
                     else "from round \($win[$c].from - 1): \((($win[$c].from - 1) * 2 * $k / $n)
                           | round) rounds per player" end)
          + " | \($last.spearman * 1000 | round / 1000) | \(map(select(.span == "all"))[0].inexact) |"' \
        "$DIR/$w.$label.loop.json"
}

T0=$(date +%s)
echo "evenodds quality: seed $SEED, $ROUNDS rounds per world, partial $PARTIAL per mille, map bias" \
     "up to $BIAS logits (8 maps), skill mean $SKILL_MEAN, sd 100; tune --budget $BUDGET; files in $DIR"
echo
world w12 1000
world w6 300
world d12 1000

echo "### Held-out log loss (last 30 % of each log; oracle = P_true from the true skills)"
echo
echo "| world | model | variant | online | refit | oracle | best vs oracle | tuned parameters |"
echo "|---|---|---|---|---|---|---|---|"
for w in w12 w6 d12; do
    for m in $MODELS; do
        variant "$w" "$m" weights --param bias=off
        variant "$w" "$m" weights+map --param bias=map
        if [ "$m" = hive ] || [ "$m" = trueskill ]; then
            variant "$w" "$m" no-weights --no-weights --param bias=off
            variant "$w" "$m" no-weights+map --no-weights --param bias=map
        fi
    done
done
echo
echo "(w12: 12v12, 1000 players; w6: 6v6, 300 players; skill mean $SKILL_MEAN, partial $PARTIAL"
echo "per mille, map bias up to $BIAS; d12: 12v12, 1000 players, the sim's defaults (skill mean 0,"
echo "partial 100 per mille, bias 0.3); $ROUNDS rounds each, random teams.)"
echo
echo "### Closed loop with our balancer ($LOOP_ROUNDS rounds, windows of 10,000: Brier / stomps %)"
echo
echo "| world | model | per window | converged (Brier 0.25 ± 0.01 and stomps < 5 % from then on) | Spearman at the end | inexact rounds |"
echo "|---|---|---|---|---|---|"
for m in $MODELS; do loop w12 12 500 "$m"; done
for m in $MODELS; do loop w6 6 300 "$m"; done
for m in $MODELS; do loop d12 12 500 "$m"; done
# TrueSkill's tuned tau minimises log loss, not stomps; docs/SIM.md's first closed-loop table
# met the targets with tau = 0.1.
loop d12 12 500 trueskill "trueskill, tau=0.1" tau=0.1
echo
echo "(The worlds' options as above, another seed; w12 and d12 with 500 players, w6 with 300;"
echo "parameters tuned on the world's random-team log above; work limit $WORK_LIMIT nodes.)"
echo
echo "$(( $(date +%s) - T0 )) s on $(lscpu | sed -n 's/^Model name: *//p' | head -1), load $(uptime | sed 's/.*load average: //')"
