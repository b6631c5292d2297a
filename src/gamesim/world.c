/* The gamesim's world: a population of players with hidden true skills, and the maps with
 * their true biases. The skills and biases come from eo_sim's world (eo_sim.h), read through
 * eo_sim_player_get() and eo_sim_map_get(), so that the gamesim and `evenodds sim` draw from
 * the same distributions (docs/SIM.md) and outcomes follow the same curve (eo_sim_p_true()).
 * eo_sim's own loop (its balancer, its pool) is not used: here the teams come from the game
 * and the library, and the ratings from the service. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_sim.h"
#include "gamesim/gamesim.h"

/* ---- random numbers ----------------------------------------------------------------------- */

void gs_rng_seed(gs_rng *r, uint64_t seed, uint64_t stream)
{
    /* Streams apart by a large odd constant: each server draws its own sequence, so one
     * server's events do not shift another's. */
    r->s = seed ^ (stream * 0xD1B54A32D192ED03u);
    (void)gs_rng_next(r);
}

uint64_t gs_rng_next(gs_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

double gs_rng_unit(gs_rng *r)
{
    return (double)(gs_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t gs_rng_below(gs_rng *r, uint64_t n)
{
    /* Rejection keeps it exactly uniform (the bias of a plain modulo is tiny here, but free
     * to avoid). */
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
        x = gs_rng_next(r);
    } while (x >= lim);
    return x % n;
}

bool gs_rng_chance(gs_rng *r, double p)
{
    return gs_rng_unit(r) < p;
}

/* ---- the world ---------------------------------------------------------------------------- */

int gs_world_create(gs_world *w, uint64_t seed, size_t population, const char *mode, char *err,
                    size_t errlen)
{
    memset(w, 0, sizeof *w);
    eo_sim_config sc;
    eo_sim_config_default(&sc);
    sc.seed = seed;
    /* eo_sim wants room for its own teams (2·team_max + 1 players); its loop is not used, so
     * the smallest teams do, and a tiny population gets a few unused players. */
    sc.team_min = sc.team_max = 2;
    sc.players = (uint32_t)(population < 5 ? 5 : population);
    /* An average player is worth 100 skill points per unit of time, so a team a player short
     * is weaker (σ(100 / 173.7) ≈ 0.64 against an even team), as on a real server; with the
     * default mean of 0 a missing player would cost nothing. */
    sc.skill_mean = 100;
    eo_sim *sim = NULL;
    int rc = eo_sim_create(&sc, NULL, &sim);
    if (rc != 0) {
        snprintf(err, errlen, "cannot create the world: %s", eo_strerror(rc));
        return rc;
    }
    w->n = population;
    w->seed = seed;
    w->scale = sc.scale;
    w->draw_rate = sc.draw_permille / 1000.0;
    w->nmaps = sc.maps;
    w->skill = calloc(population, sizeof *w->skill);
    w->server = calloc(population, sizeof *w->server);
    w->seen = calloc(population, sizeof *w->seen);
    w->offline = calloc(population, sizeof *w->offline);
    w->pos = calloc(population, sizeof *w->pos);
    w->map = calloc(w->nmaps, sizeof *w->map);
    w->bias = calloc(w->nmaps, sizeof *w->bias);
    if (!w->skill || !w->server || !w->seen || !w->offline || !w->pos || !w->map || !w->bias) {
        eo_sim_destroy(sim);
        gs_world_free(w);
        snprintf(err, errlen, "out of memory for %zu players", population);
        return EO_ENOMEM;
    }
    for (size_t i = 0; i < population; i++) {
        eo_sim_player p;
        if ((rc = eo_sim_player_get(sim, i, &p)) != 0)
            break;
        w->skill[i] = p.skill;
        w->server[i] = -1;
        w->offline[i] = (uint32_t)i;
        w->pos[i] = i;
    }
    w->noffline = population;
    for (size_t m = 0; rc == 0 && m < w->nmaps; m++) {
        const char *name = NULL;
        if ((rc = eo_sim_map_get(sim, m, &name, &w->bias[m])) == 0)
            snprintf(w->map[m], sizeof w->map[m], "%s_%s", mode, name);
    }
    eo_sim_destroy(sim);
    if (rc != 0) {
        gs_world_free(w);
        snprintf(err, errlen, "cannot read the world: %s", eo_strerror(rc));
    }
    return rc;
}

void gs_world_free(gs_world *w)
{
    free(w->skill);
    free(w->server);
    free(w->seen);
    free(w->offline);
    free(w->pos);
    free(w->map);
    free(w->bias);
    memset(w, 0, sizeof *w);
}

void gs_world_player_id(const gs_world *w, size_t i, char *out, size_t cap)
{
    snprintf(out, cap, "gs%llu-p%zu", (unsigned long long)w->seed, i + 1);
}

long gs_world_take(gs_world *w, gs_rng *r, int server)
{
    if (w->noffline == 0)
        return -1;
    size_t k = (size_t)gs_rng_below(r, w->noffline);
    uint32_t i = w->offline[k];
    uint32_t last = w->offline[--w->noffline];
    w->offline[k] = last;
    w->pos[last] = k;
    w->server[i] = server;
    w->seen[i] = true;
    return (long)i;
}

void gs_world_release(gs_world *w, size_t i)
{
    if (w->server[i] < 0)
        return;
    w->server[i] = -1;
    w->pos[i] = w->noffline;
    w->offline[w->noffline++] = (uint32_t)i;
}
