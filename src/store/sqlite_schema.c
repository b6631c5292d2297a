/* The SQLite schema as an ordered list of migrations. Never edit a step that has shipped: add a
 * new one. Each runs in its own transaction together with the row that records its version. */
#include "store/store_internal.h"

const char *const eo__sqlite_migrations[] = {
    /* 1: pools, the event log (rounds and admin edits, one sequence per pool) and player rows.
     * log.id is the physical append order (sequential rowid keys, so appends touch the right edge
     * of the B-tree); (pool_id, seq) is the logical order; (pool_id, round_id) the idempotency key.
     * SQLite treats NULLs as distinct in UNIQUE, so edits (round_id NULL) never collide.
     * players rows are small and keyed by (pool_id, player_id): a clustered WITHOUT ROWID table. */
    "CREATE TABLE schema_version (\n"
    "  version INTEGER PRIMARY KEY\n"
    ");\n"
    "CREATE TABLE pools (\n"
    "  id         INTEGER PRIMARY KEY,\n"
    "  name       TEXT    NOT NULL UNIQUE,\n"
    "  model      TEXT    NOT NULL,\n"
    "  params     TEXT    NOT NULL,\n"
    "  created_at INTEGER NOT NULL\n"
    ");\n"
    "CREATE TABLE log (\n"
    "  id       INTEGER PRIMARY KEY,\n"
    "  pool_id  INTEGER NOT NULL REFERENCES pools(id),\n"
    "  seq      INTEGER NOT NULL,\n"
    "  kind     INTEGER NOT NULL CHECK (kind IN (0, 1, 2)),\n"
    "  round_id TEXT,\n"
    "  body     TEXT    NOT NULL,\n"
    "  response TEXT,\n"
    "  at       INTEGER NOT NULL,\n"
    "  UNIQUE (pool_id, seq),\n"
    "  UNIQUE (pool_id, round_id),\n"
    "  CHECK ((kind = 0) = (round_id IS NOT NULL))\n"
    ");\n"
    "CREATE TABLE players (\n"
    "  pool_id       INTEGER NOT NULL REFERENCES pools(id),\n"
    "  player_id     TEXT    NOT NULL,\n"
    "  rating        INTEGER NOT NULL,\n"
    "  rounds        INTEGER NOT NULL,\n"
    "  last_ended_at INTEGER NOT NULL,\n"
    "  PRIMARY KEY (pool_id, player_id)\n"
    ") WITHOUT ROWID;\n",
    /* 2: player rows for every model: the display value as a real, the model's mean, deviation
     * and volatility, and visibility as the model decided it at the last update. Version 1
     * knew only SynElo (mean = rating, no deviation; visible from the pool's t_shadow). */
    "CREATE TABLE players_v2 (\n"
    "  pool_id       INTEGER NOT NULL REFERENCES pools(id),\n"
    "  player_id     TEXT    NOT NULL,\n"
    "  rating        REAL    NOT NULL,\n"
    "  mu            REAL    NOT NULL,\n"
    "  sigma         REAL    NOT NULL,\n"
    "  volatility    REAL    NOT NULL,\n"
    "  rounds        INTEGER NOT NULL,\n"
    "  visible       INTEGER NOT NULL,\n"
    "  last_ended_at INTEGER NOT NULL,\n"
    "  PRIMARY KEY (pool_id, player_id)\n"
    ") WITHOUT ROWID;\n"
    "INSERT INTO players_v2 SELECT p.pool_id, p.player_id, p.rating, p.rating, 0, 0, p.rounds,\n"
    "  p.rounds >= coalesce(json_extract(pools.params, '$.t_shadow'), 50), p.last_ended_at\n"
    "  FROM players AS p JOIN pools ON pools.id = p.pool_id;\n"
    "DROP TABLE players;\n"
    "ALTER TABLE players_v2 RENAME TO players;\n",
    /* 3: seasons. The log gains kind 3 (a season's soft reset; SQLite cannot alter a CHECK, so
     * the table is rebuilt with the same rows and ids). A season's row names it and the log
     * entry that ended it; standings hold its players' final state, read highest first. */
    "CREATE TABLE log_v3 (\n"
    "  id       INTEGER PRIMARY KEY,\n"
    "  pool_id  INTEGER NOT NULL REFERENCES pools(id),\n"
    "  seq      INTEGER NOT NULL,\n"
    "  kind     INTEGER NOT NULL CHECK (kind IN (0, 1, 2, 3)),\n"
    "  round_id TEXT,\n"
    "  body     TEXT    NOT NULL,\n"
    "  response TEXT,\n"
    "  at       INTEGER NOT NULL,\n"
    "  UNIQUE (pool_id, seq),\n"
    "  UNIQUE (pool_id, round_id),\n"
    "  CHECK ((kind = 0) = (round_id IS NOT NULL))\n"
    ");\n"
    "INSERT INTO log_v3 SELECT id, pool_id, seq, kind, round_id, body, response, at FROM log;\n"
    "DROP TABLE log;\n"
    "ALTER TABLE log_v3 RENAME TO log;\n"
    "CREATE TABLE seasons (\n"
    "  pool_id INTEGER NOT NULL REFERENCES pools(id),\n"
    "  name    TEXT    NOT NULL,\n"
    "  seq     INTEGER NOT NULL,\n"
    "  at      INTEGER NOT NULL,\n"
    "  PRIMARY KEY (pool_id, name)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE standings (\n"
    "  pool_id       INTEGER NOT NULL,\n"
    "  season        TEXT    NOT NULL,\n"
    "  player_id     TEXT    NOT NULL,\n"
    "  rating        REAL    NOT NULL,\n"
    "  mu            REAL    NOT NULL,\n"
    "  sigma         REAL    NOT NULL,\n"
    "  volatility    REAL    NOT NULL,\n"
    "  rounds        INTEGER NOT NULL,\n"
    "  visible       INTEGER NOT NULL,\n"
    "  last_ended_at INTEGER NOT NULL,\n"
    "  PRIMARY KEY (pool_id, season, player_id),\n"
    "  FOREIGN KEY (pool_id, season) REFERENCES seasons(pool_id, name)\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX standings_rank ON standings (pool_id, season, rating DESC, player_id);\n",
    /* 4: the log gains kind 4 (a refit: fitted states of up to 2048 players, eo_codec.h);
     * the table is rebuilt with the same rows and ids, as in step 3. */
    "CREATE TABLE log_v4 (\n"
    "  id       INTEGER PRIMARY KEY,\n"
    "  pool_id  INTEGER NOT NULL REFERENCES pools(id),\n"
    "  seq      INTEGER NOT NULL,\n"
    "  kind     INTEGER NOT NULL CHECK (kind IN (0, 1, 2, 3, 4)),\n"
    "  round_id TEXT,\n"
    "  body     TEXT    NOT NULL,\n"
    "  response TEXT,\n"
    "  at       INTEGER NOT NULL,\n"
    "  UNIQUE (pool_id, seq),\n"
    "  UNIQUE (pool_id, round_id),\n"
    "  CHECK ((kind = 0) = (round_id IS NOT NULL))\n"
    ");\n"
    "INSERT INTO log_v4 SELECT id, pool_id, seq, kind, round_id, body, response, at FROM log;\n"
    "DROP TABLE log;\n"
    "ALTER TABLE log_v4 RENAME TO log;\n",
    /* 5: model-specific values of a player's view (eo_rating_view.extra: the hive model's
     * side offset, commander skill, commander offset and commander rounds), 0 for the rest. */
    "ALTER TABLE players ADD COLUMN x1 REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE players ADD COLUMN x2 REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE players ADD COLUMN x3 REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE players ADD COLUMN x4 REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE standings ADD COLUMN x1 REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE standings ADD COLUMN x2 REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE standings ADD COLUMN x3 REAL NOT NULL DEFAULT 0;\n"
    "ALTER TABLE standings ADD COLUMN x4 REAL NOT NULL DEFAULT 0;\n",
    /* 6: one row whose counter eo_store_probe() raises: a write that must reach the disk to
     * commit, so that a store that cannot take writes shows it (/readyz). */
    ("CREATE TABLE probe (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);\n"
     "INSERT INTO probe VALUES (1, 0);\n"),
    /* 7 (matchmaking; numbered 8 once the dashboard's step lands before it): the coordinator's
     * objects (docs/MATCHMAKING.md "Durability"), one row each: queues, tickets, instances
     * and sessions. `request` is the canonical text of the request that created the object
     * (what an idempotent repeat is compared with, and what a restart decodes again), `doc`
     * its current document (what a poll answers, read without the writer), `live` whether the
     * writer holds it in memory (loaded at start); finished objects stay readable until pruned
     * by age (mm_done). */
    ("CREATE TABLE mm_objects (\n"
     "  id         INTEGER PRIMARY KEY,\n"
     "  kind       INTEGER NOT NULL CHECK (kind IN (0, 1, 2, 3)),\n"
     "  name       TEXT    NOT NULL,\n"
     "  owner      TEXT    NOT NULL,\n"
     "  status     TEXT    NOT NULL,\n"
     "  live       INTEGER NOT NULL,\n"
     "  token      TEXT,\n"
     "  request    TEXT    NOT NULL,\n"
     "  doc        TEXT    NOT NULL,\n"
     "  created_at INTEGER NOT NULL,\n"
     "  updated_at INTEGER NOT NULL,\n"
     "  UNIQUE (kind, name)\n"
     ");\n"
     "CREATE INDEX mm_live ON mm_objects (kind, created_at) WHERE live = 1;\n"
     "CREATE INDEX mm_done ON mm_objects (updated_at) WHERE live = 0;\n"),
};

_Static_assert(sizeof eo__sqlite_migrations / sizeof eo__sqlite_migrations[0] ==
                   EO_STORE_SCHEMA_VERSION,
               "EO_STORE_SCHEMA_VERSION must equal the number of migrations");

const int eo__sqlite_migration_count =
    (int)(sizeof eo__sqlite_migrations / sizeof eo__sqlite_migrations[0]);
