/* catalog.c — writing runs into the SQLite head catalog (see catalog.h, docs/catalog.md). */
#include "catalog.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "catalog_causal.h"
#include "catalog_circuits.h"
#include "catalog_open.h"
#include "catalog_sql.h"
#include "../engine/checkpoint.h"
#include "../analyzer/checkpoint_step.h"
#include "../common/atomic_file.h"
#include "../common/printable.h"
#include "../common/progress.h"
#include "sqlite_time_limit.h"

/* The causal check's columns (schema 3; catalog_causal.c writes them): per suite the yardstick
 * and its labelled set against random sets, per head its interval, percentile, leave-one-in and
 * verdict. Listed once: SCHEMA creates them, MIGRATE_2_ADD adds them to a schema-2 catalog. */
#define CAUSAL_SUITE_COLUMNS                                                                          \
    "  ablation_median REAL, ablation_mad REAL, group_size INTEGER, n_controls INTEGER,\n"            \
    "  group_delta REAL, group_ci_low REAL, group_ci_high REAL,\n"                                   \
    "  control_median REAL, control_mad REAL, control_q80 REAL, control_max REAL,\n"
#define CAUSAL_HEAD_COLUMNS                                                                           \
    "  ablation_ci_low REAL, ablation_ci_high REAL, ablation_pct REAL,\n"                            \
    "  restore_delta REAL, restore_ci_low REAL, restore_ci_high REAL, evidence TEXT, direct_delta REAL,\n"
static const char *const MIGRATE_2_ADD =
    "ALTER TABLE runs ADD COLUMN ablation TEXT;\n"
    "ALTER TABLE suites ADD COLUMN ablation_median REAL; ALTER TABLE suites ADD COLUMN ablation_mad REAL;\n"
    "ALTER TABLE suites ADD COLUMN group_size INTEGER; ALTER TABLE suites ADD COLUMN n_controls INTEGER;\n"
    "ALTER TABLE suites ADD COLUMN group_delta REAL; ALTER TABLE suites ADD COLUMN group_ci_low REAL;\n"
    "ALTER TABLE suites ADD COLUMN group_ci_high REAL; ALTER TABLE suites ADD COLUMN control_median REAL;\n"
    "ALTER TABLE suites ADD COLUMN control_mad REAL; ALTER TABLE suites ADD COLUMN control_q80 REAL;\n"
    "ALTER TABLE suites ADD COLUMN control_max REAL;\n"
    "ALTER TABLE head_scores ADD COLUMN ablation_ci_low REAL; ALTER TABLE head_scores ADD COLUMN ablation_ci_high REAL;\n"
    "ALTER TABLE head_scores ADD COLUMN ablation_pct REAL; ALTER TABLE head_scores ADD COLUMN restore_delta REAL;\n"
    "ALTER TABLE head_scores ADD COLUMN restore_ci_low REAL; ALTER TABLE head_scores ADD COLUMN restore_ci_high REAL;\n"
    "ALTER TABLE head_scores ADD COLUMN evidence TEXT; ALTER TABLE head_scores ADD COLUMN direct_delta REAL;\n";
/* Schema 4: the label rule's fourth threshold (NULL in runs made before it: none was applied). */
static const char *const MIGRATE_3_ADD = "ALTER TABLE suites ADD COLUMN min_extra REAL;\n";
/* Schema 5: the rule's upper bound on the extra statistic (dormant's output norm ratio). */
static const char *const MIGRATE_4_ADD = "ALTER TABLE suites ADD COLUMN max_extra REAL;\n";

/* The schema. Tables are created inside the writer's transaction, so two first writers racing on
 * a new file cannot see a half-made schema. */
static const char *const SCHEMA =
    "CREATE TABLE IF NOT EXISTS models(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  sha256 TEXT NOT NULL UNIQUE,\n"
    "  name TEXT NOT NULL,\n"
    "  path TEXT NOT NULL,\n"
    "  config TEXT NOT NULL,\n"
    "  n_layer INTEGER NOT NULL, n_head INTEGER NOT NULL,\n"
    "  d_model INTEGER NOT NULL, head_dim INTEGER NOT NULL,\n"
    "  step INTEGER,\n"
    "  series TEXT);\n"
    "CREATE TABLE IF NOT EXISTS runs(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  model_id INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE,\n"
    "  time TEXT NOT NULL,\n"
    "  andrea_version TEXT NOT NULL,\n"
    "  suites TEXT NOT NULL,\n"
    "  settings TEXT NOT NULL,\n"
    "  dump_path TEXT NOT NULL,\n"
    "  maps_dtype TEXT,\n"
    "  ablation_note TEXT,\n"
    "  dump_seal TEXT,\n"
    "  ablation TEXT);\n"
    "CREATE INDEX IF NOT EXISTS runs_model ON runs(model_id, settings);\n"
    "CREATE TABLE IF NOT EXISTS suites(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  class TEXT NOT NULL,\n"
    "  n_items INTEGER NOT NULL, n_queries INTEGER NOT NULL,\n"
    "  min_score REAL NOT NULL, min_ratio REAL NOT NULL, min_margin REAL NOT NULL,\n"
    "  ablation_items INTEGER NOT NULL, clean_loss REAL, ablation_mean REAL,\n"
    CAUSAL_SUITE_COLUMNS
    "  min_extra REAL,\n"
    "  max_extra REAL,\n"
    "  PRIMARY KEY(run_id, class));\n"

    "CREATE TABLE IF NOT EXISTS head_scores(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  layer INTEGER NOT NULL, head INTEGER NOT NULL, class TEXT NOT NULL,\n"
    "  score REAL, baseline REAL, control REAL,\n"
    "  ablation_delta REAL, ablation_mean REAL,\n"
    "  dla_mean REAL, norm_mean REAL, n_queries INTEGER NOT NULL,\n"
    "  extra_name TEXT, extra_value REAL,\n"
    CAUSAL_HEAD_COLUMNS
    "  PRIMARY KEY(run_id, layer, head, class));\n"
    "CREATE TABLE IF NOT EXISTS labels(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  layer INTEGER NOT NULL, head INTEGER NOT NULL, class TEXT NOT NULL,\n"
    "  rule TEXT NOT NULL,\n"
    "  PRIMARY KEY(run_id, layer, head, class));\n"
    /* deleting a run (or model) removes its rows also on connections without foreign keys on
     * (the sqlite3 shell's and Python's default): with them on, ON DELETE CASCADE did it first */
    "CREATE TRIGGER IF NOT EXISTS runs_delete AFTER DELETE ON runs BEGIN\n"
    "  DELETE FROM suites WHERE run_id = old.id; DELETE FROM head_scores WHERE run_id = old.id;\n"
    "  DELETE FROM labels WHERE run_id = old.id; END;\n"
    "CREATE TRIGGER IF NOT EXISTS models_delete AFTER DELETE ON models BEGIN\n"
    "  DELETE FROM runs WHERE model_id = old.id; END;\n"
    /* current: the newest run that scored this suite (class) on this checkpoint (model row =
     * sha256), so a run of other suites or settings never hides it. Planned as: the model's runs
     * through runs_model, each probed in suites' primary key (run_id, class); an index on
     * suites(class) would make SQLite scan every run of the class instead. */
    "CREATE VIEW IF NOT EXISTS head_catalog AS\n"
    "  SELECT m.name AS model, coalesce(m.series, m.name) AS series, m.path AS model_path,\n"
    "         m.sha256 AS checkpoint_sha256, m.step AS step,\n"
    "         r.id AS run, r.time AS run_time,\n"
    "         (r.id = (SELECT max(s2.run_id) FROM suites s2 JOIN runs r2 ON r2.id = s2.run_id\n"
    "                  WHERE r2.model_id = r.model_id AND s2.class = s.class)) AS current,\n"
    "         s.layer AS layer, s.head AS head, s.class AS class,\n"
    "         s.score AS score, s.baseline AS baseline, s.control AS control,\n"
    "         s.ablation_delta AS ablation_delta, s.ablation_mean AS ablation_mean,\n"
    "         r.ablation AS ablation, s.ablation_ci_low AS ablation_ci_low, s.ablation_ci_high AS ablation_ci_high,\n"
    "         s.ablation_pct AS ablation_pct, s.evidence AS evidence, s.restore_delta AS restore_delta,\n"
    "         s.restore_ci_low AS restore_ci_low, s.restore_ci_high AS restore_ci_high, s.direct_delta AS direct_delta,\n"
    /* causal: 1 for a labelled head whose verdict is necessary or redundant, 0 for pattern_only;
     * without a verdict (an unlabelled head, a run before verdicts) the earlier rule: its ablation
     * effect above the mean head's (docs/catalog.md) */
    "         CASE WHEN s.evidence IS NOT NULL THEN s.evidence IN ('necessary', 'redundant')\n"
    "              WHEN s.ablation_delta IS NULL OR s.ablation_mean IS NULL THEN NULL\n"
    "              ELSE s.ablation_delta > s.ablation_mean END AS causal,\n"
    "         s.dla_mean AS dla_mean, s.norm_mean AS norm_mean, s.n_queries AS n_queries,\n"
    "         s.extra_name AS extra_name, s.extra_value AS extra_value,\n"
    "         (l.run_id IS NOT NULL) AS label\n"
    "  FROM head_scores s JOIN runs r ON r.id = s.run_id JOIN models m ON m.id = r.model_id\n"
    "  LEFT JOIN labels l ON l.run_id = s.run_id AND l.layer = s.layer AND l.head = s.head\n"
    "                     AND l.class = s.class;\n";

/* Schema 1 -> 2 (foreign keys gain ON DELETE CASCADE, models.series, runs.dump_seal, the view's
 * `current` replaces `latest`). SQLite cannot alter a foreign key, so the tables are rebuilt inside
 * the writer's transaction: the old ones are renamed, the new ones created (SCHEMA, run after this),
 * rows copied and the old tables dropped, children first. Orphan rows (a run deleted by hand while
 * the keys were not enforced) have nothing to point at and are not copied. */
static const char *const MIGRATE_1_RENAME =
    "DROP VIEW IF EXISTS head_catalog;\n"
    "DROP INDEX IF EXISTS runs_model;\n"
    "ALTER TABLE labels RENAME TO labels_v1;\n"
    "ALTER TABLE head_scores RENAME TO head_scores_v1;\n"
    "ALTER TABLE suites RENAME TO suites_v1;\n"
    "ALTER TABLE runs RENAME TO runs_v1;\n"
    "ALTER TABLE models RENAME TO models_v1;\n";
static const char *const MIGRATE_1_COPY =
    "INSERT INTO models(id, sha256, name, path, config, n_layer, n_head, d_model, head_dim, step, series)\n"
    "  SELECT id, sha256, name, path, config, n_layer, n_head, d_model, head_dim, step, andrea_series(name)\n"
    "  FROM models_v1;\n"
    "INSERT INTO runs(id, model_id, time, andrea_version, suites, settings, dump_path, maps_dtype, ablation_note)\n"
    "  SELECT id, model_id, time, andrea_version, suites, settings, dump_path, maps_dtype, ablation_note\n"
    "  FROM runs_v1 WHERE model_id IN (SELECT id FROM models);\n"
    "INSERT INTO suites(run_id, class, n_items, n_queries, min_score, min_ratio, min_margin, ablation_items,\n"
    "                   clean_loss, ablation_mean)\n"
    "  SELECT run_id, class, n_items, n_queries, min_score, min_ratio, min_margin, ablation_items, clean_loss,\n"
    "         ablation_mean FROM suites_v1 WHERE run_id IN (SELECT id FROM runs);\n"
    "INSERT INTO head_scores(run_id, layer, head, class, score, baseline, control, ablation_delta, ablation_mean,\n"
    "                        dla_mean, norm_mean, n_queries, extra_name, extra_value)\n"
    "  SELECT run_id, layer, head, class, score, baseline, control, ablation_delta, ablation_mean, dla_mean,\n"
    "         norm_mean, n_queries, extra_name, extra_value FROM head_scores_v1 WHERE run_id IN (SELECT id FROM runs);\n"
    "INSERT INTO labels SELECT * FROM labels_v1 WHERE run_id IN (SELECT id FROM runs);\n"
    "DROP TABLE labels_v1; DROP TABLE head_scores_v1; DROP TABLE suites_v1;\n"
    "DROP TABLE runs_v1; DROP TABLE models_v1;\n";


/* The rule (docs/catalog.md): a trailing "[-_.]?(step|iter|ckpt)[-_]?DIGITS" or "[-_.]DIGITS"
 * (letters in any case) is removed; a name without such an ending, or that would become empty,
 * is its own series. */
void andrea_catalog_series_from_name(const char *name, char *out, size_t cap) {
    const char *slash = strrchr(name, '/');
    if (slash && slash != name) { /* RUN/checkpoint-N (andrea_catalog_model_name): the run */
        snprintf(out, cap, "%.*s", (int)(slash - name), name);
        return;
    }
    size_t n = strlen(name), k = n;
    while (k > 0 && isdigit((unsigned char)name[k - 1])) k--;
    size_t keep = n;
    if (k < n && k > 0) {
        size_t j = k;
        if (name[j - 1] == '-' || name[j - 1] == '_') j--;
        static const char *const words[] = {"step", "iter", "ckpt"};
        int word = 0;
        for (int w = 0; w < 3 && !word; w++)
            if (j >= 4 && !strncasecmp(name + j - 4, words[w], 4)) word = 1;
        if (word) {
            j -= 4;
            if (j > 0 && (name[j - 1] == '-' || name[j - 1] == '_' || name[j - 1] == '.')) j--;
            keep = j;
        } else if (name[k - 1] == '-' || name[k - 1] == '_' || name[k - 1] == '.') {
            keep = k - 1;
        }
        if (keep == 0) keep = n;
    }
    snprintf(out, cap, "%.*s", (int)keep, name);
}

/* andrea_series(name): andrea_catalog_series_from_name as an SQL function (the schema migration). */
static void sql_series(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    const unsigned char *name = sqlite3_value_text(argv[0]);
    if (!name) {
        sqlite3_result_null(ctx);
        return;
    }
    char out[512];
    andrea_catalog_series_from_name((const char *)name, out, sizeof out);
    sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
}

void andrea_catalog_model_name(const char *path, char *out, size_t cap) {
    andrea_checkpoint_base_name(path, out, cap);
    char *dot = strrchr(out, '.');
    if (dot && dot != out && (!strcmp(dot, ".bin") || !strcmp(dot, ".safetensors"))) *dot = 0;
    if (!andrea_is_step_name(out)) return;
    /* a name that is only a step (run/checkpoint-500, run/step_100.bin) is named with its run, the
     * folder that holds it: RUN/checkpoint-500, whose series is RUN */
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    while (n > 0 && path[n - 1] != '/') n--; /* the checkpoint's own component */
    while (n > 1 && path[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/') b--;
    const int len = (int)(n - b);
    if (len <= 0 || (len == 1 && path[b] == '.') || (len == 2 && !strncmp(path + b, "..", 2)) || path[b] == '/') return;
    char own[512];
    snprintf(own, sizeof own, "%s", out);
    snprintf(out, cap, "%.*s/%s", len, path + b, own);
}

static char *config_json(const andrea_config *c) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    /* no memory for one field: NULL (the caller's "out of memory"), never a config without it */
    const int ok = cJSON_AddNumberToObject(o, "n_layer", c->n_layer) &&
                   cJSON_AddNumberToObject(o, "n_head", c->n_head) &&
                   cJSON_AddNumberToObject(o, "d_model", c->d_model) &&
                   cJSON_AddNumberToObject(o, "head_dim", c->head_dim) &&
                   cJSON_AddNumberToObject(o, "vocab_size", c->vocab_size) &&
                   cJSON_AddNumberToObject(o, "padded_vocab_size", c->padded_vocab_size) &&
                   cJSON_AddNumberToObject(o, "max_seq_len", c->max_seq_len);
    char *s = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}

int andrea_catalog_bind_real_or_null(sqlite3_stmt *st, int i, double v) {
    return isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

/* Takes the write lock. The first attempt does not wait: when another writer holds the lock the
 * user is told (a run otherwise sat silent for minutes); then busy_timeout waits up to 30 s per
 * attempt, and CATALOG_LOCK_ATTEMPTS attempts cover a long run of another writer (every run is one
 * transaction of bounded size): about 5 minutes in all. */
#define CATALOG_LOCK_ATTEMPTS 10
int andrea_catalog_begin_immediate(sqlite3 *db, const char *path, ae_error *err) {
    SQL_CHECK(path, db, sqlite3_busy_timeout(db, 0), SQLITE_OK);
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    SQL_CHECK(path, db, sqlite3_busy_timeout(db, 30000), SQLITE_OK);
    if (rc == SQLITE_OK) return 0;
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
        char shown[512];
        andrea_printable(path, shown, sizeof shown);
        if (!andrea_progress_quiet)
            fprintf(stderr, "andrea: another process is writing into the catalog %s; waiting for it (up to %d minutes)\n",
                    shown, CATALOG_LOCK_ATTEMPTS / 2);
    }
    for (int attempt = 1; rc == SQLITE_BUSY || rc == SQLITE_LOCKED; attempt++) {
        if (attempt > CATALOG_LOCK_ATTEMPTS)
            return andrea_fail(err, "%s: another process held the catalog's write lock for %d minutes: try again when "
                                    "it is done", path, CATALOG_LOCK_ATTEMPTS / 2);
        usleep(100000);
        rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) return 0;
    char why[512];
    return andrea_fail(err, "%s: BEGIN IMMEDIATE failed: %s", path, andrea_sqlite_why(db, rc, why, sizeof why));
fail:
    return -1;
}

/* Test hook, compiled into test builds only (-DANDREA_TESTING): a SIGKILL at a named point. */
static void crash_hook(const char *where) {
#ifdef ANDREA_TESTING
    const char *at = getenv("ANDREA_TEST_CRASH_AT");
    if (at && !strcmp(at, where)) raise(SIGKILL);
#else
    (void)where;
#endif
}

/* Only a regular file (or none yet) can hold a catalog: SQLite would open a device and leave its
 * -journal beside it (/dev/null-journal), or fail late on a folder or pipe. */
static int check_regular_or_absent(const char *path, off_t *size, ae_error *err) {
    struct stat sb;
    *size = -1; /* absent */
    if (stat(path, &sb) != 0)
        return errno == ENOENT ? 0 : andrea_fail(err, "%s: cannot use as a catalog: %s", path, strerror(errno));
    *size = sb.st_size;
    if (!S_ISREG(sb.st_mode))
        return andrea_fail(err, "%s: not a regular file (a %s): a catalog is an SQLite file; name a new file or an andrea "
                                "catalog", path, S_ISDIR(sb.st_mode) ? "folder" : S_ISFIFO(sb.st_mode) ? "pipe" : "device or socket");
    return 0;
}

/* SQLite writes the catalog and makes its -wal and -shm beside it: a read-only file or folder
 * fails only at the first write, after the work. */
/* What the catalog's temporary ".tmp-PID-RANDOM" and SQLite's "-journal" add to its path, at most. */
#define CATALOG_PATH_SUFFIXES 40

static int check_folder_writable(const char *path, ae_error *err) {
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    if (access(dir, W_OK | X_OK) != 0)
        return andrea_fail(err, "%s: cannot write the catalog's folder %s: %s", path, dir, strerror(errno));
    if (access(path, F_OK) == 0 && access(path, W_OK) != 0)
        return andrea_fail(err, "%s: cannot write the catalog: %s", path, strerror(errno));
    /* SQLite's unix files take a full path of at most 512 bytes (SQLITE_MAX_PATHNAME), its
     * temporary's suffix and journal's included: past it the catalog failed after the whole run */
    char cwd[4096];
    const size_t full = strlen(path) + (path[0] == '/' ? 0 : (getcwd(cwd, sizeof cwd) ? strlen(cwd) + 1 : sizeof cwd));
    if (full + CATALOG_PATH_SUFFIXES > 512)
        return andrea_fail(err, "%s: the catalog's full path is %zu bytes, more than the %d SQLite can open with its "
                                "temporary's suffix: give a folder nearer /", path, full, 512 - CATALOG_PATH_SUFFIXES);
    /* and a file can be made there (root passes access() where none can be: /proc, a full or
     * read-only mount): the catalog's own temporary, made and removed */
    char tmp[AE_PATH_MAX];
    if (andrea_tmp_begin(path, tmp, sizeof tmp, err)) return -1;
    andrea_tmp_abort(tmp);
    return 0;
}

int andrea_catalog_check_writable(const char *path, ae_error *err) {
    off_t size;
    if (!path[0]) return andrea_fail(err, "the catalog's file name is empty");
    if (check_regular_or_absent(path, &size, err) || check_folder_writable(path, err)) return -1;
    if (size <= 0) return 0; /* a new catalog */
    sqlite3 *db = NULL;
    int ret = -1;
    /* read-write (nothing is written): a read-only connection to a WAL catalog makes its -wal and
     * -shm files and cannot remove them, so a run that then failed left them beside the catalog;
     * the last read-write connection's close removes them */
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return 0; /* unreadable here (no -shm in a read-only folder): the writer's open says why */
    }
    SQL_CHECK(path, db, sqlite3_busy_timeout(db, 30000), SQLITE_OK);
    const int rc = sqlite3_exec(db, "SELECT 1 FROM sqlite_master LIMIT 1", NULL, NULL, NULL);
    if ((rc & 0xff) == SQLITE_NOTADB) {
        andrea_fail(err, "%s: not an SQLite database (another kind of file, or a catalog damaged beyond reading); andrea "
                         "writes only into its own catalogs: name a new file or an andrea catalog", path);
        goto fail;
    }
    ret = rc == SQLITE_OK ? andrea_catalog_check_ours(db, path, err) : 0; /* busy or other: the writer retries */
fail:
    sqlite3_close(db);
    return ret;
}

/* A new catalog appears whole or not at all: its schema is made in memory, written by VACUUM INTO
 * to "<path>.tmp-<pid>-<random>" (one file, no journal) and linked to path, which fails (EEXIST) when
 * another writer made the catalog first: then that one is used. On a full disk or past a file
 * size limit only the temporary was written, and it is removed: no empty catalog.db is left (an
 * SQLite file made in place was left empty, or without tables). Where the file system has no
 * hard links the catalog is made in place, as SQLite does. */
static int create_catalog_file(const char *path, ae_error *err) {
    char tmp[AE_PATH_MAX];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int ret = -1;
    if (andrea_tmp_begin(path, tmp, sizeof tmp, err)) return -1;
    SQL_CHECK(path, NULL, sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
    SQL_CHECK(path, db,
              sqlite3_create_function(db, "andrea_series", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_series, NULL,
                                      NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    if (andrea_catalog_prepare(db, path, err)) goto fail;
    SQL_CHECK(path, db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, "VACUUM INTO ?", -1, &st, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 1, tmp, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_DONE);
    if (link(tmp, path) != 0 && errno != EEXIST) {
        const int e = errno;
        if (e != EPERM && e != ENOTSUP && e != EOPNOTSUPP && e != ENOSYS) {
            andrea_fail(err, "%s: cannot create the catalog: %s", path, strerror(e));
            goto fail;
        }
    }
    ret = 0;
fail:
    sqlite3_finalize(st);
    sqlite3_close(db);
    andrea_tmp_abort(tmp); /* the catalog is path's link now, or was never made */
    return ret;
}

int andrea_catalog_open_rw(const char *path, sqlite3 **out, ae_error *err) {
    sqlite3 *db = NULL;
    *out = NULL;
    off_t size;
    if (check_regular_or_absent(path, &size, err)) return -1;
    if (size < 0 && create_catalog_file(path, err)) return -1;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        char why[512];
        andrea_fail(err, "%s: cannot open catalog: %s", path, andrea_sqlite_why(db, rc, why, sizeof why));
        sqlite3_close(db);
        return -1;
    }
    SQL_CHECK(path, db, sqlite3_busy_timeout(db, 30000), SQLITE_OK);
    /* the writer's own reads end too (a view that never ends): sqlite_time_limit.h */
    SQL_CHECK(path, db, andrea_sqlite_time_limit(db, andrea_sqlite_time_limit_default()), SQLITE_OK);
    if (andrea_catalog_check_ours(db, path, err)) goto fail;
    /* journal_mode needs a moment of exclusive access; retry while another process has it. */
    for (int attempt = 0;; attempt++) {
        sqlite3_stmt *st = NULL;
        rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &st, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_step(st);
        int wal = rc == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
        sqlite3_finalize(st);
        if (wal) break;
        if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && attempt < 50) {
            usleep(100000);
            continue;
        }
        char why[512];
        if (rc == SQLITE_ROW || rc == SQLITE_DONE)
            andrea_fail(err, "%s: the catalog cannot be put in WAL mode (file system without shared memory?)", path);
        else
            andrea_fail(err, "%s: PRAGMA journal_mode=WAL failed: %s", path, andrea_sqlite_why(db, rc, why, sizeof why));
        goto fail;
    }
    /* NORMAL is durable enough in WAL mode: a crash may lose the last commit, never consistency. */
    SQL_CHECK(path, db, sqlite3_exec(db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL), SQLITE_OK);
    SQL_CHECK(path, db,
              sqlite3_create_function(db, "andrea_series", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_series, NULL,
                                      NULL),
              SQLITE_OK);
    *out = db;
    return 0;
fail:
    sqlite3_close(db);
    return -1;
}

static int insert_rows(sqlite3 *db, const char *path, const andrea_analysis *a, int64_t run,
                       ae_error *err) {
    sqlite3_stmt *suite_st = NULL, *score_st = NULL, *label_st = NULL;
    int ret = -1;
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "INSERT INTO suites(run_id, class, n_items, n_queries, min_score, min_ratio,"
                                 " min_margin, ablation_items, clean_loss, ablation_mean, min_extra, max_extra)"
                                 " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                                 -1, &suite_st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "INSERT INTO head_scores(run_id, layer, head, class, score, baseline, control,"
                                 " ablation_delta, ablation_mean, dla_mean, norm_mean, n_queries, extra_name,"
                                 " extra_value) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                                 -1, &score_st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db, "INSERT INTO labels(run_id, layer, head, class, rule) VALUES(?,?,?,?,?)",
                                 -1, &label_st, NULL),
              SQLITE_OK);
    int nh = a->cfg.n_layer * a->cfg.n_head;
    for (int s = 0; s < a->n_suites; s++) {
        const andrea_suite_scores *su = &a->suites[s];
        SQL_CHECK(path, db, sqlite3_reset(suite_st), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_int64(suite_st, 1, run), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_text(suite_st, 2, su->name, -1, SQLITE_TRANSIENT), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_int(suite_st, 3, su->n_items), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_int64(suite_st, 4, su->n_queries), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_double(suite_st, 5, su->rule.min_score), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_double(suite_st, 6, su->rule.min_ratio), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_double(suite_st, 7, su->rule.min_margin), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_int(suite_st, 8, su->n_ablation_items), SQLITE_OK);
        SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(suite_st, 9, su->clean_loss), SQLITE_OK);
        SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(suite_st, 10, su->ablation_mean), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_double(suite_st, 11, su->rule.min_extra), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_double(suite_st, 12, su->rule.max_extra), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_step(suite_st), SQLITE_DONE);
        char rule[256];
        snprintf(rule, sizeof rule,
                 "{\"min_score\":%.6g,\"min_ratio\":%.6g,\"min_margin\":%.6g,\"min_extra\":%.6g,\"max_extra\":%.6g}",
                 su->rule.min_score, su->rule.min_ratio, su->rule.min_margin, su->rule.min_extra, su->rule.max_extra);
        for (int i = 0; i < nh; i++) {
            const andrea_head_score *h = &su->heads[i];
            if (s == a->n_suites / 2 && i == nh / 2) crash_hook("mid-run");
            SQL_CHECK(path, db, sqlite3_reset(score_st), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_int64(score_st, 1, run), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_int(score_st, 2, h->layer), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_int(score_st, 3, h->head), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_text(score_st, 4, su->name, -1, SQLITE_TRANSIENT), SQLITE_OK);
            SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(score_st, 5, h->score), SQLITE_OK);
            SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(score_st, 6, h->baseline), SQLITE_OK);
            SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(score_st, 7, h->control), SQLITE_OK);
            SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(score_st, 8, h->ablation_delta), SQLITE_OK);
            SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(score_st, 9, su->ablation_mean), SQLITE_OK);
            SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(score_st, 10, h->dla_mean), SQLITE_OK);
            SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(score_st, 11, h->norm_mean), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_int64(score_st, 12, su->n_queries), SQLITE_OK);
            if (su->pass && su->pass->extra_name)
                SQL_CHECK(path, db, sqlite3_bind_text(score_st, 13, su->pass->extra_name, -1, SQLITE_STATIC),
                          SQLITE_OK);
            else
                SQL_CHECK(path, db, sqlite3_bind_null(score_st, 13), SQLITE_OK);
            SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(score_st, 14, h->extra), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_step(score_st), SQLITE_DONE);
            if (!h->label) continue;
            SQL_CHECK(path, db, sqlite3_reset(label_st), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_int64(label_st, 1, run), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_int(label_st, 2, h->layer), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_int(label_st, 3, h->head), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_text(label_st, 4, su->name, -1, SQLITE_TRANSIENT), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_text(label_st, 5, rule, -1, SQLITE_TRANSIENT), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_step(label_st), SQLITE_DONE);
        }
    }
    ret = 0;
fail:
    sqlite3_finalize(suite_st);
    sqlite3_finalize(score_st);
    sqlite3_finalize(label_st);
    return ret;
}

/* Inside the writer's transaction: refuses a newer schema, migrates schema 1 (MIGRATE_1_*),
 * creates what is missing (SCHEMA), sets user_version and the application mark. */
static int prepare_schema(sqlite3 *db, const char *path, ae_error *err) {
    sqlite3_stmt *st = NULL;
    /* A catalog from a newer andrea may have a different schema: refuse rather than corrupt. */
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
    int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    if (v > ANDREA_CATALOG_SCHEMA_VERSION) {
        andrea_fail(err, "%s: catalog schema version %d is newer than this andrea's (%d)", path, v,
                ANDREA_CATALOG_SCHEMA_VERSION);
        goto fail;
    }
    if (v == 0) { /* no version yet: a new file, or tables of the first schema written before it */
        SQL_CHECK(path, db,
                  sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'models'",
                                     -1, &st, NULL),
                  SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
        if (sqlite3_column_int(st, 0) > 0) v = 1;
        sqlite3_finalize(st);
        st = NULL;
    }
    /* version 1: rebuilt into this schema in this same transaction (see MIGRATE_1_*) */
    if (v == 1) SQL_CHECK(path, db, sqlite3_exec(db, MIGRATE_1_RENAME, NULL, NULL, NULL), SQLITE_OK);
    /* version 2: the causal check's columns added (NULL in its runs: measured before them) */
    if (v == 2) SQL_CHECK(path, db, sqlite3_exec(db, MIGRATE_2_ADD, NULL, NULL, NULL), SQLITE_OK);
    if (v == 2 || v == 3) SQL_CHECK(path, db, sqlite3_exec(db, MIGRATE_3_ADD, NULL, NULL, NULL), SQLITE_OK);
    if (v >= 2 && v <= 4) SQL_CHECK(path, db, sqlite3_exec(db, MIGRATE_4_ADD, NULL, NULL, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_exec(db, SCHEMA, NULL, NULL, NULL), SQLITE_OK);
    if (v == 1) SQL_CHECK(path, db, sqlite3_exec(db, MIGRATE_1_COPY, NULL, NULL, NULL), SQLITE_OK);
    if (andrea_catalog_circuits_schema(db, path, err)) goto fail; /* circuit tables (catalog_circuits.c) */
    if (v < ANDREA_CATALOG_SCHEMA_VERSION) {
        char uv[64];
        snprintf(uv, sizeof uv, "PRAGMA user_version=%d", ANDREA_CATALOG_SCHEMA_VERSION);
        SQL_CHECK(path, db, sqlite3_exec(db, uv, NULL, NULL, NULL), SQLITE_OK);
    }
    /* the mark andrea_catalog_check_ours looks for (catalogs made before it get it on their next run) */
    char mark[64];
    snprintf(mark, sizeof mark, "PRAGMA application_id=%d", ANDREA_CATALOG_APPLICATION_ID);
    SQL_CHECK(path, db, sqlite3_exec(db, mark, NULL, NULL, NULL), SQLITE_OK);
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

int andrea_catalog_prepare(sqlite3 *db, const char *path, ae_error *err) {
    /* The view holds no data: it is made anew on every write, so a catalog written by an older
     * andrea gets the view's newer columns (causal) on its next run. */
    SQL_CHECK(path, db, sqlite3_exec(db, "DROP VIEW IF EXISTS head_catalog", NULL, NULL, NULL), SQLITE_OK);
    return prepare_schema(db, path, err);
fail:
    return -1;
}

/* A checkpoint already in the catalog under another name (a copy, a renamed file): note says
 * under which model its run is stored. note: cap bytes, "" when there is nothing to say. */
static int known_as(sqlite3 *db, const char *path, const andrea_analysis *a, const char *name, char *note, size_t cap,
                    ae_error *err) {
    sqlite3_stmt *st = NULL;
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, "SELECT name, step, n_layer, n_head, d_model FROM models WHERE sha256 = ?", -1,
                                           &st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 1, a->sha256, -1, SQLITE_STATIC), SQLITE_OK);
    int rc = sqlite3_step(st);
    /* one sha256, one shape: a dump claiming a catalogued checkpoint's sha256 with another shape
     * was filed under it, its heads out of that model's range */
    if (rc == SQLITE_ROW && (sqlite3_column_int(st, 2) != a->cfg.n_layer || sqlite3_column_int(st, 3) != a->cfg.n_head ||
                             sqlite3_column_int(st, 4) != a->cfg.d_model)) {
        andrea_fail(err, "%s: the catalog holds checkpoint sha256 %.12s... as %d layers x %d heads (d_model %d); %.1000s has "
                         "%d x %d (d_model %d) under that sha256: one of them is not that checkpoint's", path, a->sha256,
                    sqlite3_column_int(st, 2), sqlite3_column_int(st, 3), sqlite3_column_int(st, 4), a->ckpt_path,
                    a->cfg.n_layer, a->cfg.n_head, a->cfg.d_model);
        goto fail;
    }
    if (rc == SQLITE_ROW && note) {
        const char *old = (const char *)sqlite3_column_text(st, 0);
        const int had_step = sqlite3_column_type(st, 1) != SQLITE_NULL;
        const long long step = sqlite3_column_int64(st, 1);
        char at[48] = "";
        if (had_step) snprintf(at, sizeof at, " (step %lld)", a->step_given ? a->step : step);
        if (old && strcmp(old, name))
            snprintf(note, cap, "%.1000s has the bytes of %.200s%s in the catalog (sha256 %.12s): its run is stored "
                     "under that model's name and series", a->ckpt_path, old, at, a->sha256);
        else if (had_step && a->has_step && a->step != step && !a->step_given)
            snprintf(note, cap, "%.1000s: the catalog knows this checkpoint at step %lld; it stays there (--step %lld "
                     "moves it)", a->ckpt_path, step, a->step);
    } else if (rc != SQLITE_ROW) {
        SQL_CHECK(path, db, rc, SQLITE_DONE);
    }
    sqlite3_finalize(st);
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

int andrea_catalog_insert_run(sqlite3 *db, const char *path, const andrea_analysis *a, int64_t *run_id, char *note,
                              size_t note_cap, ae_error *err) {
    sqlite3_stmt *st = NULL;
    int ret = -1;
    if (note && note_cap) note[0] = 0;
    char *cfg = config_json(&a->cfg);
    if (!cfg) {
        andrea_fail(err, "%s: out of memory", path);
        goto fail;
    }
    char name[512];
    andrea_catalog_model_name(a->ckpt_path, name, sizeof name);
    if (known_as(db, path, a, name, note, note_cap, err)) goto fail;
    /* One row per checkpoint content. Its name, series and step are those it was first analysed
     * with (a step learnt later fills a NULL one; --step replaces it): a copy or a renamed file
     * analysed later must not move the checkpoint out of its series or to another step, which
     * would hide it from `heads --series` and `diff`. The path and config are the newest. */
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "INSERT INTO models(sha256, name, path, config, n_layer, n_head, d_model,"
                                 " head_dim, step, series) VALUES(?,?,?,?,?,?,?,?,?,andrea_series(?2))"
                                 " ON CONFLICT(sha256) DO UPDATE SET path=excluded.path, config=excluded.config,"
                                 " step=CASE WHEN ?10 THEN excluded.step ELSE coalesce(models.step, excluded.step) END",
                                 -1, &st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 10, a->step_given && a->has_step), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 1, a->sha256, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 3, a->ckpt_path, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 4, cfg, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 5, a->cfg.n_layer), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 6, a->cfg.n_head), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 7, a->cfg.d_model), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 8, a->cfg.head_dim), SQLITE_OK);
    if (a->has_step)
        SQL_CHECK(path, db, sqlite3_bind_int64(st, 9, a->step), SQLITE_OK);
    else
        SQL_CHECK(path, db, sqlite3_bind_null(st, 9), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    st = NULL;
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, "SELECT id FROM models WHERE sha256 = ?", -1, &st, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 1, a->sha256, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
    int64_t model_id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    st = NULL;

    /* Same checkpoint, same settings: the new run replaces the old one (its rows go with it:
     * ON DELETE CASCADE, foreign keys on). */
    static const char *const del[] = {
        "DELETE FROM runs WHERE model_id = ?1 AND settings = ?2",
    };
    for (size_t i = 0; i < sizeof del / sizeof del[0]; i++) {
        SQL_CHECK(path, db, sqlite3_prepare_v2(db, del[i], -1, &st, NULL), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_int64(st, 1, model_id), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_text(st, 2, a->settings_json, -1, SQLITE_STATIC), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_step(st), SQLITE_DONE);
        sqlite3_finalize(st);
        st = NULL;
    }

    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char suites[4096] = "";
    for (int s = 0; s < a->n_suites; s++) {
        size_t used = strlen(suites);
        snprintf(suites + used, sizeof suites - used, "%s%s", s ? "," : "", a->suites[s].name);
    }
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "INSERT INTO runs(model_id, time, andrea_version, suites, settings, dump_path,"
                                 " maps_dtype, ablation_note, dump_seal) VALUES(?,?,?,?,?,?,?,?,?)",
                                 -1, &st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int64(st, 1, model_id), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 2, when, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 3, ANDREA_VERSION, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 4, suites, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 5, a->settings_json, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 6, a->dump_path, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 7, a->maps_dtype, -1, SQLITE_STATIC), SQLITE_OK);
    if (a->ablation_note[0])
        SQL_CHECK(path, db, sqlite3_bind_text(st, 8, a->ablation_note, -1, SQLITE_STATIC), SQLITE_OK);
    else
        SQL_CHECK(path, db, sqlite3_bind_null(st, 8), SQLITE_OK);
    if (a->dump_seal[0])
        SQL_CHECK(path, db, sqlite3_bind_text(st, 9, a->dump_seal, -1, SQLITE_STATIC), SQLITE_OK);
    else
        SQL_CHECK(path, db, sqlite3_bind_null(st, 9), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    st = NULL;
    int64_t run = sqlite3_last_insert_rowid(db);
    if (insert_rows(db, path, a, run, err) || andrea_catalog_insert_causal(db, path, a, run, err)) goto fail;
    if (run_id) *run_id = run;
    ret = 0;
fail:
    sqlite3_finalize(st);
    free(cfg);
    return ret;
}

int andrea_catalog_commit_close(sqlite3 *db, const char *path, ae_error *err) {
    SQL_CHECK(path, db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    /* fails (SQLITE_BUSY) while a statement is left open; the last connection to close checkpoints the WAL */
    SQL_CHECK(path, db, sqlite3_close(db), SQLITE_OK);
    return 0;
fail:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); /* a no-op when the commit went through */
    sqlite3_close(db);
    return -1;
}

void andrea_catalog_rollback_close(sqlite3 *db) {
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
}

int andrea_catalog_write(const char *path, const andrea_analysis *a, int64_t *run_id, ae_error *err) {
    sqlite3 *db = NULL;
    if (andrea_catalog_open_rw(path, &db, err)) return -1;
    if (andrea_catalog_begin_immediate(db, path, err) || andrea_catalog_prepare(db, path, err) ||
        andrea_catalog_insert_run(db, path, a, run_id, NULL, 0, err)) {
        andrea_catalog_rollback_close(db);
        return -1;
    }
    return andrea_catalog_commit_close(db, path, err);
}
