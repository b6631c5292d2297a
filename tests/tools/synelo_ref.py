#!/usr/bin/env python3
"""Independent reference implementation of SynElo, for the golden replay test.

Written from the rules (seed 000 F1-F5 and the choices settled in docs/MODELS.md), not from the
C code: plain lists for the window, sums recomputed from scratch each round, statistics.pstdev
for the population standard deviation, math.exp (libm) for the exponentials, Python's round()
(ties to even) for banker's rounding. Standard library only.

Usage: synelo_ref.py ROUNDS.jsonl GOLDEN_OUT [--k-every N]
Reads canonical round records (plain id strings as members) and admin edits
({"admin": "set", "id": ..., "rating": ...} or {"admin": "reset", "id": ...}), replays them in
order into one pool with the seed's default parameters, and writes:
    p ID RATING ROUNDS           every player, sorted by id (byte order)
    k ROUND MEMBER K             K used for each member of every N-th round (0-based, A then B)
plus '#' comment lines with what the log exercised.
"""

import json
import math
import statistics
import sys

R0 = 1000
R_MIN = 100
R_GRAD_CAP = 2200
T_SHADOW = 50
K_MIN = 2.0
K_MAX = 72.0
THETA = 2400.0  # 400 * floor(median{1..12})
W = 500
W_VEL, W_WRE, W_VOL = 0.25, 0.25, 0.50
SIGMA = 400.0
RATING_MAX = 1000000
Q31 = 2 ** 31


class Player:
    def __init__(self):
        self.rating = R0
        self.rounds = 0
        self.window = []  # (rating after, expected P as Q31 integer, outcome S)


def convergence(window):
    n = len(window)
    if n < 2:
        return 1.0
    m = n // 2
    w = [e[0] for e in window]
    old, new = w[:m], w[n - m:]
    # Means of integers: Python's int / int is correctly rounded.
    v_vel = abs(sum(new) / m - sum(old) / m) / K_MAX
    mean_o = sum(e[2] for e in window) / n
    mean_e = sum(e[1] for e in window) / (n * Q31)
    v_wre = abs(mean_o - mean_e) / 0.10
    v_vol = statistics.pstdev(w) / K_MAX
    c = W_VEL * v_vel + W_WRE * v_wre + W_VOL * v_vol
    return min(1.0, max(0.0, c))


def k_factor(pl):
    g = math.exp(-((pl.rating - R0) ** 2) / (2 * SIGMA * SIGMA))
    return K_MIN + (K_MAX - K_MIN) * convergence(pl.window) * g


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    k_every = 500
    if len(sys.argv) == 5 and sys.argv[3] == "--k-every":
        k_every = int(sys.argv[4])
    players = {}
    klines = []
    stats = {"rounds": 0, "draws": 0, "floor": 0, "cap": 0, "evictions": 0, "admin": 0}
    with open(sys.argv[1], encoding="utf-8") as f:
        index = -1
        for line in f:
            rec = json.loads(line)
            if "admin" in rec:
                # Admin edits: set keeps rounds and window; reset makes the player new.
                if rec["admin"] == "set":
                    pl = players.setdefault(rec["id"], Player())
                    pl.rating = min(RATING_MAX, max(R_MIN, rec["rating"]))
                else:
                    players[rec["id"]] = Player()
                stats["admin"] += 1
                continue
            index += 1
            teams = [[players.setdefault(i, Player()) for i in rec[t]] for t in ("A", "B")]
            sums = [sum(p.rating for p in team) for team in teams]
            p_a = 1.0 / (1.0 + math.exp(-(sums[0] - sums[1]) / THETA))
            expected = [p_a, 1.0 - p_a]
            s = {"A": [1.0, 0.0], "B": [0.0, 1.0], "draw": [0.5, 0.5]}[rec["winner"]]
            stats["rounds"] += 1
            stats["draws"] += rec["winner"] == "draw"
            # K and the new rating of everyone from round-start state, then the writes.
            results = []
            member = 0
            for t in (0, 1):
                for pl in teams[t]:
                    k = k_factor(pl)
                    if index % k_every == 0:
                        klines.append("k %d %d %.17g" % (index, member, k))
                    member += 1
                    new = round(pl.rating + k * (s[t] - expected[t]))
                    if new < R_MIN:
                        new = R_MIN
                        stats["floor"] += 1
                    if pl.rounds + 1 == T_SHADOW and new > R_GRAD_CAP:
                        new = R_GRAD_CAP
                        stats["cap"] += 1
                    new = min(new, RATING_MAX)
                    results.append((pl, new, round(expected[t] * Q31), s[t]))
            for pl, new, e_q31, outcome in results:
                pl.rating = new
                pl.rounds += 1
                pl.window.append((new, e_q31, outcome))
                if len(pl.window) > W:
                    del pl.window[0]
                    stats["evictions"] += 1
    ids = sorted(players, key=lambda i: i.encode("utf-8"))
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        out.write("# SynElo golden replay, written by tests/tools/synelo_ref.py\n")
        out.write("# rounds %(rounds)d draws %(draws)d floor-hits %(floor)d grad-caps %(cap)d "
                  "window-evictions %(evictions)d admin-edits %(admin)d\n" % stats)
        out.write("# players %d, with >= 50 rounds %d, with > 500 rounds %d\n" % (
            len(ids), sum(players[i].rounds >= 50 for i in ids),
            sum(players[i].rounds > 500 for i in ids)))
        for i in ids:
            out.write("p %s %d %d\n" % (i, players[i].rating, players[i].rounds))
        for line in klines:
            out.write(line + "\n")


if __name__ == "__main__":
    main()
