#!/usr/bin/env bash
# How well a new pool predicts out of the box (docs/SIM.md, "Defaults of new pools: the
# targets"): every model's held-out log loss with a new pool's parameters and with the old
# defaults (those of pools created before presence), beside the oracle's, on generated worlds:
#   a    partial-play times carry no information (10 % of members partial; the truth counts
#        everyone in full), teams of 2 to 8;
#   a30  the same with 30 % of members partial;
#   b    a team one player short in 40 % of rounds loses more often, by 0.8 logit;
#   w12, w6, d12  the worlds of bench/quality.sh (docs/SIM.md, "Quality figures for every model").
# Then, on b, every model tuned (`evenodds tune`, a new pool's parameters as the start) against
# TrueSkill tuned without the presence term (and without the map bias): the best of each one's
# online and refit held-out log loss, as bench/quality.sh scores them.
# Builds nothing: it runs an evenodds binary (default build-bench/evenodds, from `make bench`).
# Needs bash, jq and awk. Prints markdown tables.
#
#   bench/defaults.sh [EVENODDS]          # ~10 minutes on one core
#
# D_BUDGET [40] tune's folds; D_DIR [a new temporary directory] where the logs are kept.
set -euo pipefail

EO=${1:-build-bench/evenodds}
BUDGET=${D_BUDGET:-40}
DIR=${D_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/eo-defaults.XXXXXX")}
MODELS="synelo trueskill glicko2 elo wenglin hive"

[ -x "$EO" ] || { echo "defaults.sh: no executable '$EO' (run make bench first)" >&2; exit 2; }
command -v jq >/dev/null || { echo "defaults.sh: needs jq" >&2; exit 2; }
mkdir -p "$DIR"

# The world options of each world (all with random teams, so the ratings see varied teams).
world_opts() {
    case $1 in
    a) echo "--seed 11 --rounds 30000 --players 200 --team-min 2 --team-max 8 --partial 100 --partial-effect none" ;;
    a30) echo "--seed 11 --rounds 30000 --players 200 --team-min 2 --team-max 8 --partial 300 --partial-effect none" ;;
    b) echo "--seed 12 --rounds 20000 --players 300 --team-min 2 --team-max 8 --short 400 --presence 0.8" ;;
    w12) echo "--seed 7 --rounds 40000 --players 1000 --team 12 --partial 150 --maps 8 --bias 0.5 --skill-mean 100" ;;
    w6) echo "--seed 7 --rounds 40000 --players 300 --team 6 --partial 150 --maps 8 --bias 0.5 --skill-mean 100" ;;
    d12) echo "--seed 7 --rounds 40000 --players 1000 --team 12 --partial 100 --maps 8 --bias 0.3 --skill-mean 0" ;;
    esac
}

# The old defaults of model M as --param arguments: what pools created before presence have
# (docs/MODELS.md, "Defaults of new pools").
old_params() {
    local p="--param bias=off --param presence=off"
    case $1 in
    synelo) p="$p --param theta=2400" ;;
    trueskill | wenglin) p="$p --param beta=4.166666666666667" ;;
    glicko2) p="$p --param team_expectation=0" ;;
    elo) p="$p --param team=mean --param k_new=40 --param k=20 --param k_high=10" ;;
    hive) p="$p --param alpha=8 --param alpha_size=0" ;;
    esac
    echo "$p"
}

# eval WORLD MODEL [OPTIONS...]: the held-out log loss (second half) and the oracle's.
held() {
    local w=$1 m=$2
    shift 2
    "$EO" eval --model "$m" "$@" --eval-from 0.5 --truth "$DIR/$w.json" --format json \
        "$DIR/$w.jsonl" | jq -r '"\(.logloss) \(.oracle.logloss)"'
}

T0=$(date +%s)
for w in a a30 b w12 w6 d12; do
    # shellcheck disable=SC2046 # the options are a list of arguments
    "$EO" sim $(world_opts "$w") --balancer random --report-every 0 --format json \
        --rounds-out "$DIR/$w.jsonl" --truth-out "$DIR/$w.json" >/dev/null
done

echo "### Held-out log loss, a new pool's parameters (old defaults in brackets)"
echo
echo "| world | oracle | synelo | trueskill | glicko2 | elo | wenglin | hive | best vs oracle |"
echo "|---|---|---|---|---|---|---|---|---|"
for w in a a30 b w12 w6 d12; do
    cells=
    best=9
    oracle=
    for m in $MODELS; do
        read -r ll oracle < <(held "$w" "$m")
        # shellcheck disable=SC2046 # the options are a list of arguments
        read -r old _ < <(held "$w" "$m" $(old_params "$m"))
        cells="$cells $(printf '%.4f (%.4f)' "$ll" "$old") |"
        best=$(awk -v a="$best" -v b="$ll" 'BEGIN { print (b < a ? b : a) }')
    done
    printf '| %s | %.4f |%s %s |\n' "$w" "$oracle" "$cells" \
        "$(awk -v b="$best" -v o="$oracle" 'BEGIN { printf "%+.1f %%", 100 * (b / o - 1) }')"
done
echo
echo "(Held out: the second half of each log, draws left out; every model predicts each round"
echo "before rating it. best vs oracle: the best new-pool figure / the oracle's − 1.)"
echo

# tuned WORLD MODEL LABEL [OPTIONS...]: tune (rounds 10–70 % train, the rest held out; the
# search's best, whether or not it beat the gate), then the held-out log loss online (eval
# --eval-from 0.7, tune's own held-out figure) and refit (fit --holdout 0.3).
tuned() {
    local w=$1 m=$2 label=$3
    shift 3
    "$EO" tune --model "$m" "$@" --eval-from 0.7 --budget "$BUDGET" \
        --report "$DIR/$w.$label.tune.json" --format json "$DIR/$w.jsonl" >/dev/null 2>&1
    local p
    p=$(jq -r '.best.params | to_entries | map("--param \(.key)=\(.value)") | join(" ")' \
        "$DIR/$w.$label.tune.json")
    local online refit
    # shellcheck disable=SC2086 # $p is a list of arguments
    online=$("$EO" eval --model "$m" "$@" $p --eval-from 0.7 --format json "$DIR/$w.jsonl" |
        jq -r '.logloss')
    # shellcheck disable=SC2086
    refit=$("$EO" fit --model "$m" "$@" $p --holdout 0.3 --format json "$DIR/$w.jsonl" \
        2>/dev/null | jq -r '.holdout.refit.logloss')
    awk -v l="$label" -v on="$online" -v rf="$refit" -v p="${p//--param /}" 'BEGIN {
        best = on < rf ? on : rf
        printf "| %s | %.4f | %.4f | %.4f | `%s` |\n", l, on, rf, best, p }'
}

echo "### World b tuned: every model against TrueSkill without the presence term"
echo
echo "| model | online | refit | best | tuned parameters |"
echo "|---|---|---|---|---|"
tuned b trueskill "trueskill, no presence, no map bias" --param presence=off --param bias=off
for m in $MODELS; do tuned b "$m" "$m"; done
echo
echo "(tune --budget $BUDGET from a new pool's parameters; held out: the last 30 % of the log.)"
echo
echo "$(( $(date +%s) - T0 )) s on $(lscpu | sed -n 's/^Model name: *//p' | head -1), load $(uptime | sed 's/.*load average: //')"
