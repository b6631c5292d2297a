/* The backend interface behind eo_store: each backend (sqlite.c now, postgres.c later) fills one
 * ops table with its own SQL and embeds struct eo_store as the first member of its handle. */
#ifndef EO_STORE_INTERNAL_H
#define EO_STORE_INTERNAL_H

#include "evenodds/eo_store.h"

#define EO__STORE_ERRMAX 512

typedef struct eo__store_ops {
    const char *name;
    void (*close)(eo_store *s);
    int (*schema_version)(eo_store *s, int *version);
    int (*begin)(eo_store *s);
    int (*commit)(eo_store *s);
    int (*rollback)(eo_store *s);
    int (*probe)(eo_store *s);
    bool (*readonly)(eo_store *s);
    int (*savepoint)(eo_store *s);
    int (*release)(eo_store *s);
    int (*rollback_to)(eo_store *s);
    int (*pool_create)(eo_store *s, const char *name, const char *model, const char *params_json,
                       int64_t created_at, int64_t *id);
    int (*pool_get)(eo_store *s, const char *name, eo_pool_row *out);
    int (*pool_list)(eo_store *s, eo_pool_row **rows, size_t *n);
    int (*pool_set_config)(eo_store *s, int64_t pool_id, const char *model,
                           const char *params_json);
    int (*log_append)(eo_store *s, int64_t pool_id, eo_log_kind kind, const char *round_id,
                      const char *body, const char *response, int64_t at, int64_t *seq);
    int (*round_find)(eo_store *s, int64_t pool_id, const char *round_id, char **body,
                      char **response);
    int (*log_each)(eo_store *s, int64_t pool_id, int64_t after,
                    int (*fn)(void *ctx, const eo_log_entry *e), void *ctx);
    int (*round_count)(eo_store *s, int64_t pool_id, int64_t *n);
    int (*player_put)(eo_store *s, int64_t pool_id, const char *id, const eo_player_row *row);
    int (*player_get)(eo_store *s, int64_t pool_id, const char *id, eo_player_row *out);
    int (*player_delete)(eo_store *s, int64_t pool_id, const char *id);
    int (*players_each)(eo_store *s, int64_t pool_id,
                        int (*fn)(void *ctx, const char *id, const eo_player_row *row),
                        void *ctx);
    int (*season_create)(eo_store *s, int64_t pool_id, const char *name, int64_t seq, int64_t at);
    int (*season_get)(eo_store *s, int64_t pool_id, const char *name, int64_t *seq, int64_t *at);
    int (*seasons_each)(eo_store *s, int64_t pool_id,
                        int (*fn)(void *ctx, const char *name, int64_t seq, int64_t at,
                                  int64_t players),
                        void *ctx);
    int (*standing_put)(eo_store *s, int64_t pool_id, const char *season, const char *player,
                        const eo_player_row *row);
    int (*standings_each)(eo_store *s, int64_t pool_id, const char *season, int64_t offset,
                          int64_t limit,
                          int (*fn)(void *ctx, const char *player, const eo_player_row *row),
                          void *ctx);
    int (*player_put_played)(eo_store *s, int64_t pool_id, const char *id,
                             const eo_player_row *row, const char *name, int64_t n,
                             int64_t *prev);
    int (*player_last)(eo_store *s, int64_t pool_id, const char *id, int64_t *last);
    int (*player_link)(eo_store *s, int64_t pool_id, const char *id, const char *name,
                       int64_t last, int64_t prev);
    int (*round_ix_put)(eo_store *s, int64_t pool_id, const eo_round_ix *r,
                        const char *const *ids, const eo_member_ix *m, size_t count);
    int (*round_ix_last)(eo_store *s, int64_t pool_id, eo_round_ix *out);
    int (*health_add)(eo_store *s, int64_t pool_id, int64_t day, int bin, const eo_eval_sums *d);
    int (*player_name_get)(eo_store *s, int64_t pool_id, const char *id, char **name);
    int (*board_count)(eo_store *s, int64_t pool_id, int64_t *n);
    int (*board_each)(eo_store *s, int64_t pool_id, const char *q, int64_t offset, int64_t limit,
                      int (*fn)(void *ctx, int64_t rank, const char *id, const char *name,
                                const eo_player_row *row),
                      void *ctx);
    int (*board_rank)(eo_store *s, int64_t pool_id, const char *id, int64_t *rank);
    int (*history_each)(eo_store *s, int64_t pool_id, const char *id, int64_t since,
                        int64_t limit, int (*fn)(void *ctx, const eo_member_ix *m), void *ctx);
    int (*rounds_each)(eo_store *s, int64_t pool_id, int64_t offset, int64_t limit,
                       int (*fn)(void *ctx, const eo_round_item *r), void *ctx);
    int (*player_rounds_each)(eo_store *s, int64_t pool_id, const char *id, int64_t offset,
                              int64_t limit,
                              int (*fn)(void *ctx, const eo_round_item *r,
                                        const eo_member_ix *m),
                              void *ctx);
    int (*round_get)(eo_store *s, int64_t pool_id, const char *round_id,
                     int (*fn)(void *ctx, const eo_round_item *r), void *ctx);
    int (*health_each)(eo_store *s, int64_t pool_id, int64_t from_day,
                       int (*fn)(void *ctx, int64_t day, int bin, const eo_eval_sums *d),
                       void *ctx);
    int (*mm_put)(eo_store *s, eo_mm_kind kind, const eo_mm_row *row);
    int (*mm_set)(eo_store *s, eo_mm_kind kind, const char *name, const char *status, bool live,
                  const char *doc, int64_t updated_at);
    int (*mm_get)(eo_store *s, eo_mm_kind kind, const char *name, eo_mm_row *out);
    int (*mm_each)(eo_store *s, eo_mm_kind kind, bool live_only,
                   int (*fn)(void *ctx, const eo_mm_row *row), void *ctx);
    int (*mm_prune)(eo_store *s, int64_t before, int64_t *n);
} eo__store_ops;

struct eo_store {
    const eo__store_ops *ops;
    unsigned flags;
    char errmsg[EO__STORE_ERRMAX];
};

/* Formats the handle's last error text (printf-style). */
void eo__store_seterr(eo_store *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The SQLite backend's opener (sqlite.c). */
int eo__sqlite_open(const char *path, unsigned flags, eo_store **out, char *err, size_t errlen);

/* The SQLite schema: migration i (0-based) takes the store from version i to version i + 1. */
extern const char *const eo__sqlite_migrations[];
extern const int eo__sqlite_migration_count;

#endif
