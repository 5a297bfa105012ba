/* catalog_query.c — reading the head catalog: `heads` (bound filters) and `sql` (one read-only
 * statement), plus table / CSV / JSON output of a result set (see catalog.h). */
#include "catalog.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "../common/buf.h"
#include "../common/checked_size.h"
#include "catalog_open.h"
#include "catalog_sql.h"
#include "../common/printable.h"
#include "sqlite_time_limit.h"

void andrea_catalog_rows_free(catalog_rows *r) {
    if (r->col_names)
        for (int i = 0; i < r->n_cols; i++) free(r->col_names[i]);
    if (r->cells)
        for (size_t i = 0; i < (size_t)r->n_rows * (size_t)r->n_cols; i++) free(r->cells[i]);
    free(r->col_names);
    free(r->cells);
    free(r->numeric);
    free(r->lens);
    memset(r, 0, sizeof *r);
}

int andrea_catalog_format_parse(const char *s) {
    if (!strcmp(s, "table")) return CATALOG_TABLE;
    if (!strcmp(s, "csv")) return CATALOG_CSV;
    if (!strcmp(s, "json")) return CATALOG_JSON;
    return -1;
}

/* The shared read-only open (catalog_open.h) plus foreign keys, as on every andrea connection, and
 * the query's time limit when lim gives one (else the process's, set at the open). */
static int open_ro(const char *path, const catalog_limits *lim, sqlite3 **out, ae_error *err) {
    sqlite3 *db = NULL;
    if (andrea_catalog_open_ro(path, &db, err)) return -1;
    SQL_CHECK(path, db, sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL), SQLITE_OK);
    if (lim) SQL_CHECK(path, db, andrea_sqlite_time_limit(db, lim->timeout_s), SQLITE_OK);
    *out = db;
    return 0;
fail:
    sqlite3_close(db);
    return -1;
}

/* What a cell of `text_bytes` bytes of text costs in memory: its pointer and numeric flag, and its
 * text as malloc holds it (an 8-byte header, 16-byte granules), so a million tiny cells count too. */
static size_t cell_cost(size_t text_bytes) {
    return sizeof(char *) + 1 + sizeof(size_t) + ((text_bytes + 1 + 8 + 15) & ~(size_t)15);
}

/* A BLOB as the SQL literal x'00ff0a22' (lower-case hex): text that stays text in every format
 * (raw bytes would cut a cell at a NUL and put invalid UTF-8 into JSON), and reads back into
 * SQLite as the same blob. */
static char *blob_literal(const unsigned char *b, size_t n) {
    static const char hex[] = "0123456789abcdef";
    char *s = malloc(2 * n + 4); /* n <= SQLite's value limit (< 2^31): no overflow */
    if (!s) return NULL;
    s[0] = 'x', s[1] = '\'';
    for (size_t i = 0; i < n; i++) s[2 + 2 * i] = hex[b[i] >> 4], s[3 + 2 * i] = hex[b[i] & 15];
    s[2 + 2 * n] = '\'', s[3 + 2 * n] = 0;
    return s;
}

/* Cell i of the current row as text into *out (NULL for SQL NULL), adding its cost to *bytes. The
 * size is known (sqlite3_column_bytes, which neither converts nor expands a zeroblob) and checked
 * against max_bytes BEFORE the value is fetched or copied, so a huge cell is refused without
 * being held. Returns 0, 1 when the result would pass max_bytes, -1 when out of memory. */
static int cell_text(sqlite3_stmt *st, int i, size_t max_bytes, size_t *bytes, char **out, size_t *len) {
    const int t = sqlite3_column_type(st, i);
    char buf[64];
    size_t n = 0;
    *out = NULL;
    if (t == SQLITE_NULL) n = 0;
    else if (t == SQLITE_FLOAT) n = (size_t)snprintf(buf, sizeof buf, "%.17g", sqlite3_column_double(st, i));
    else if (t == SQLITE_BLOB) n = 2 * (size_t)sqlite3_column_bytes(st, i) + 3;
    else if (sqlite3_column_text(st, i)) n = (size_t)sqlite3_column_bytes(st, i); /* INTEGER, TEXT as UTF-8 */
    else return -1; /* the conversion to text ran out of memory */
    const size_t cost = t == SQLITE_NULL ? sizeof(char *) + 1 + sizeof(size_t) : cell_cost(n);
    if (cost > max_bytes - *bytes) return 1;
    *bytes += cost;
    *len = n;
    if (t == SQLITE_NULL) return 0;
    if (t == SQLITE_BLOB) {
        const void *b = sqlite3_column_blob(st, i);
        *out = blob_literal(b ? b : "", (n - 3) / 2);
    } else if (t == SQLITE_FLOAT) {
        *out = strdup(buf);
    } else { /* all n bytes, NULs included (the writers show them), and a NUL after them */
        if ((*out = malloc(n + 1))) {
            memcpy(*out, sqlite3_column_text(st, i), n);
            (*out)[n] = 0;
        }
    }
    return *out ? 0 : -1;
}

/* Steps a prepared statement to the end, collecting every row as text, at most max_bytes of it. */
static int collect_rows(sqlite3 *db, const char *path, sqlite3_stmt *st, size_t max_bytes,
                        catalog_rows *out, ae_error *err) {
    memset(out, 0, sizeof *out);
    size_t bytes = 0;
    int nc = sqlite3_column_count(st);
    out->n_cols = nc;
    out->col_names = calloc(nc ? (size_t)nc : 1, sizeof(char *));
    if (!out->col_names) return andrea_fail(err, "%s: out of memory", path);
    for (int i = 0; i < nc; i++) {
        out->col_names[i] = strdup(sqlite3_column_name(st, i));
        if (!out->col_names[i]) return andrea_fail(err, "%s: out of memory", path);
    }
    size_t cap = 0, ncap = 0, lcap = 0; /* cells (rows x columns) allocated in cells, numeric and lens */
    for (;;) {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) break;
        if (rc == SQLITE_INTERRUPT && andrea_sqlite_time_limit_stopped() > 0) /* the open's time limit */
            return andrea_fail(err, "%s: query stopped after %g s (the time limit; narrow the query, add LIMIT, or raise "
                                "--timeout)", path, andrea_sqlite_time_limit_stopped());
        if (rc == SQLITE_TOOBIG) /* a value over the length limit set by collect */
            return andrea_fail(err, "%s: result too large (a value over %zu MiB; narrow the query or add LIMIT)", path,
                               max_bytes >> 21);
        char why[512];
        if (rc != SQLITE_ROW) return andrea_fail(err, "%s: query failed: %s", path, andrea_sqlite_why(db, rc, why, sizeof why));
        size_t cells;
        if (ae_mul((size_t)out->n_rows + 1, (size_t)(nc ? nc : 1), &cells) || cells > ((size_t)1 << 40) / sizeof(char *))
            return andrea_fail(err, "%s: result too large", path);
        if (andrea_grow(&out->cells, &cap, cells, sizeof(char *), 64 * (size_t)(nc ? nc : 1)) ||
            andrea_grow(&out->numeric, &ncap, cells, 1, 64 * (size_t)(nc ? nc : 1)) ||
            andrea_grow(&out->lens, &lcap, cells, sizeof(size_t), 64 * (size_t)(nc ? nc : 1)))
            return andrea_fail(err, "%s: out of memory", path);
        size_t base = (size_t)out->n_rows * (size_t)nc;
        for (int i = 0; i < nc; i++) out->cells[base + i] = NULL, out->lens[base + i] = 0; /* freed whole on a failure */
        out->n_rows++;
        for (int i = 0; i < nc; i++) {
            int t = sqlite3_column_type(st, i);
            out->numeric[base + i] = t == SQLITE_INTEGER ? 1 : t == SQLITE_FLOAT ? 2 : 0;
            const int crc = cell_text(st, i, max_bytes, &bytes, &out->cells[base + i], &out->lens[base + i]);
            if (crc > 0)
                return andrea_fail(err, "%s: result too large (over %zu MiB in memory; narrow the query or add LIMIT)",
                                   path, max_bytes >> 20);
            if (crc < 0) return andrea_fail(err, "%s: out of memory", path);
        }
    }
    return 0;
}

/* collect_rows under the size limit (the time limit was set at the open). */
static int collect(sqlite3 *db, const char *path, sqlite3_stmt *st, const catalog_limits *lim, catalog_rows *out,
                   ae_error *err) {
    const size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : CATALOG_RESULT_MAX_BYTES;
    /* SQLite builds a row's values before andrea sees them (it expands a zeroblob(N) into N bytes),
     * so cell_text's size check alone would come after the memory is taken. No value over half the
     * result limit could be shown (a blob's text is twice its size), so SQLite refuses to build one
     * (SQLITE_TOOBIG, for the query's intermediate values too). */
    const int old_length = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, max_bytes / 2 < (size_t)old_length ? (int)(max_bytes / 2) : old_length);
    int rc = collect_rows(db, path, st, max_bytes, out, err);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, old_length);
    return rc;
}

/* Schema version of a catalog opened read-only: `heads` needs the view's `current` (version 2). */
static int check_schema(sqlite3 *db, const char *path, ae_error *err) {
    int v;
    if (andrea_catalog_refuse_newer(db, path, &v, err)) return -1;
    if (v == 0) { /* no version: an empty database (or another application's), or schema 1 */
        sqlite3_stmt *st = NULL;
        int tables = 0;
        if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'models'", -1, &st,
                               NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            tables = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (!tables)
            return andrea_fail(err, "%s: not an andrea catalog (it holds no runs; andrea analyze or classify writes one)",
                               path);
        v = 1;
    }
    if (v < ANDREA_CATALOG_SCHEMA_VERSION)
        return andrea_fail(err, "%s: catalog schema version %d is older than this andrea's (%d): the next andrea classify "
                            "or analyze into it upgrades it (docs/catalog.md)", path, v, ANDREA_CATALOG_SCHEMA_VERSION);
    return 0;
}

/* The filter's class and layer/head against what the catalog holds: -2 with the reason when the
 * class is unknown or the layer/head lies beyond every model's shape, -1 on a catalog error. */
static int check_filter(sqlite3 *db, const char *path, const catalog_heads_filter *f, ae_error *err) {
    sqlite3_stmt *st = NULL;
    if (f->class_name) {
        SQL_CHECK(path, db, sqlite3_prepare_v2(db, "SELECT 1 FROM suites WHERE class = ?1 LIMIT 1", -1, &st, NULL),
                  SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_text(st, 1, f->class_name, -1, SQLITE_STATIC), SQLITE_OK);
        int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        st = NULL;
        if (rc == SQLITE_DONE) {
            char known[512] = "", shown[64];
            SQL_CHECK(path, db, sqlite3_prepare_v2(db, "SELECT DISTINCT class FROM suites ORDER BY class", -1, &st, NULL),
                      SQLITE_OK);
            while (sqlite3_step(st) == SQLITE_ROW) {
                size_t u = strlen(known);
                snprintf(known + u, sizeof known - u, "%s%s", u ? ", " : "", (const char *)sqlite3_column_text(st, 0));
            }
            sqlite3_finalize(st);
            andrea_printable(f->class_name, shown, sizeof shown);
            andrea_fail(err, "%s: no class '%s' in this catalog (it holds: %s)", path, shown, known[0] ? known : "none");
            return -2;
        }
        if (rc != SQLITE_ROW) goto fail;
    }
    if (f->has_layer || f->has_head) {
        /* integers only: SQLite's max() ranks a text (a hand-edited 'abc') above every number,
         * and read as an int it was 0, refusing every layer as "out of range 0..-1" */
        SQL_CHECK(path, db,
                  sqlite3_prepare_v2(db,
                                     "SELECT max(CASE WHEN typeof(n_layer) = 'integer' THEN n_layer END),"
                                     " max(CASE WHEN typeof(n_head) = 'integer' THEN n_head END) FROM models",
                                     -1, &st, NULL),
                  SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
        const int known_shape = sqlite3_column_type(st, 0) == SQLITE_INTEGER && sqlite3_column_type(st, 1) == SQLITE_INTEGER;
        const int nl = sqlite3_column_int(st, 0), nh = sqlite3_column_int(st, 1);
        sqlite3_finalize(st);
        st = NULL;
        if (!known_shape) return 0; /* no model with a shape to check against: the query finds what there is */
        const int l = f->has_head ? f->head_layer : f->layer;
        if ((f->has_layer && f->layer >= nl) || (f->has_head && f->head_layer >= nl)) {
            andrea_fail(err, "%s: layer %d is out of range (the catalog's models have layers 0..%d)", path, l, nl - 1);
            return -2;
        }
        if (f->has_head && f->head_head >= nh) {
            andrea_fail(err, "%s: head %d.%d is out of range (the catalog's models have heads 0..%d per layer)", path,
                    f->head_layer, f->head_head, nh - 1);
            return -2;
        }
    }
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

/* The distinct values of one models column, comma-separated into known (cap bytes). */
static int list_models(sqlite3 *db, const char *path, const char *sql, char *known, size_t cap, ae_error *err) {
    sqlite3_stmt *st = NULL;
    int rc;
    known[0] = 0;
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        size_t u = strlen(known);
        if (u > cap - 64) {
            snprintf(known + u, cap - u, ", ...");
            break;
        }
        snprintf(known + u, cap - u, "%s%s", u ? ", " : "", v ? v : "NULL");
    }
    if (rc != SQLITE_ROW) SQL_CHECK(path, db, rc, SQLITE_DONE);
    sqlite3_finalize(st);
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

/* --model and --series must name something the catalog holds (the same rule as HEADS_SQL's ?4 and
 * ?9): one that matches nothing is the user's typo, not an empty answer, and an empty one would
 * match every model (every sha256 starts with ""). -2 with the reason, -1 on a catalog error. */
static int check_selectors(sqlite3 *db, const char *path, const catalog_heads_filter *f, ae_error *err) {
    static const char *const find[2] = {
        "SELECT 1 FROM models WHERE name = ?1 OR series = ?1 OR path = ?1 OR path = ?2"
        " OR (length(?1) >= 4 AND substr(sha256, 1, length(?1)) = lower(?1)) LIMIT 1",
        "SELECT 1 FROM models WHERE series = ?1 LIMIT 1"};
    static const char *const all[2] = {"SELECT DISTINCT name FROM models ORDER BY name",
                                       "SELECT DISTINCT series FROM models ORDER BY series"};
    static const char *const what[2] = {"model", "series"};
    sqlite3_stmt *st = NULL;
    for (int k = 0; k < 2; k++) {
        const char *sel = k ? f->series : f->model;
        char shown[64], known[512];
        if (!sel) continue;
        andrea_printable(sel, shown, sizeof shown);
        if (!sel[0]) {
            andrea_fail(err, "%s: --%s wants a %s, not an empty string", path, what[k],
                        k ? "series name" : "model name, series, path or sha256 prefix");
            return -2;
        }
        SQL_CHECK(path, db, sqlite3_prepare_v2(db, find[k], -1, &st, NULL), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_text(st, 1, sel, -1, SQLITE_STATIC), SQLITE_OK);
        char real[PATH_MAX];
        if (!k && realpath(sel, real)) SQL_CHECK(path, db, sqlite3_bind_text(st, 2, real, -1, SQLITE_TRANSIENT), SQLITE_OK);
        const int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        st = NULL;
        if (rc == SQLITE_ROW) continue;
        char why[512];
        if (rc != SQLITE_DONE) return andrea_fail(err, "%s: query failed: %s", path, andrea_sqlite_why(db, rc, why, sizeof why));
        if (list_models(db, path, all[k], known, sizeof known, err)) return -1;
        andrea_fail(err, "%s: --%s '%s' matches no %s; the catalog holds: %s", path, what[k], shown, what[k],
                    known[0] ? known : "none");
        return -2;
    }
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

/* --step must be the step of a checkpoint the catalog holds, as --model and --series must name
 * one: a step no checkpoint has is a typo (301 for 300), not an empty answer. -2 with the steps
 * there are, -1 on a catalog error. */
static int check_step(sqlite3 *db, const char *path, const catalog_heads_filter *f, ae_error *err) {
    if (!f->has_step) return 0;
    sqlite3_stmt *st = NULL;
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, "SELECT 1 FROM models WHERE step = ?1 LIMIT 1", -1, &st, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int64(st, 1, f->step), SQLITE_OK);
    const int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return 0;
    if (rc != SQLITE_DONE) return andrea_fail(err, "%s: query failed: %s", path, sqlite3_errmsg(db));
    char known[512];
    if (list_models(db, path, "SELECT DISTINCT step FROM models WHERE typeof(step) = 'integer' ORDER BY step", known,
                    sizeof known, err))
        return -1;
    if (known[0])
        andrea_fail(err, "%s: --step %lld matches no checkpoint; the catalog's steps: %s", path, f->step, known);
    else
        andrea_fail(err, "%s: --step %lld matches no checkpoint; no checkpoint of the catalog has a step (a name like "
                         "run-step00400 or analyze --step N gives one)", path, f->step);
    return -2;
fail:
    sqlite3_finalize(st);
    return -1;
}

/* Binds the filter to the heads statement (parameters ?1..?10, see andrea_catalog_heads). */
static int bind_filter(sqlite3 *db, const char *path, sqlite3_stmt *st, const catalog_heads_filter *f, ae_error *err) {
    if (f->class_name) SQL_CHECK(path, db, sqlite3_bind_text(st, 1, f->class_name, -1, SQLITE_STATIC), SQLITE_OK);
    if (f->has_layer) SQL_CHECK(path, db, sqlite3_bind_int(st, 2, f->layer), SQLITE_OK);
    if (f->has_min_score) SQL_CHECK(path, db, sqlite3_bind_double(st, 3, f->min_score), SQLITE_OK);
    if (f->model) SQL_CHECK(path, db, sqlite3_bind_text(st, 4, f->model, -1, SQLITE_STATIC), SQLITE_OK);
    /* the file --model names, resolved: the dump records the checkpoint's path absolute */
    char real[PATH_MAX];
    if (f->model && realpath(f->model, real))
        SQL_CHECK(path, db, sqlite3_bind_text(st, 10, real, -1, SQLITE_TRANSIENT), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 5, f->all || f->pivot_step ? 1 : 0), SQLITE_OK);
    if (f->has_head) {
        SQL_CHECK(path, db, sqlite3_bind_int(st, 6, f->head_layer), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_int(st, 7, f->head_head), SQLITE_OK);
    }
    if (f->has_step) SQL_CHECK(path, db, sqlite3_bind_int64(st, 8, f->step), SQLITE_OK);
    if (f->series) SQL_CHECK(path, db, sqlite3_bind_text(st, 9, f->series, -1, SQLITE_STATIC), SQLITE_OK);
    return 0;
fail:
    return -1;
}

static const char HEADS_SQL[] =
    /* extra: the class's extra evidence by name ("top1=0.93", positional's "offset=3") */
    "SELECT model, series, step, layer, head, class, score, baseline, control,"
    " extra_name || '=' || printf('%.4g', extra_value) AS extra, ablation,"
    " ablation_delta, ablation_ci_low, ablation_ci_high, ablation_pct, evidence, causal, dla_mean, label,"
    " checkpoint_sha256"
    " FROM head_catalog WHERE current"
    " AND (?1 IS NULL OR class = ?1)"
    " AND (?2 IS NULL OR layer = ?2)"
    /* a text is no score: SQLite ranks it above every number */
    " AND (?3 IS NULL OR (typeof(score) IN ('integer', 'real') AND score >= ?3))"
    /* a sha256 prefix of 4+ hex digits, as diff's: "1" (a model's name) matched every sha256 "1..." */
    " AND (?4 IS NULL OR model = ?4 OR series = ?4 OR model_path = ?4 OR model_path = ?10"
    "      OR (length(?4) >= 4 AND substr(checkpoint_sha256, 1, length(?4)) = lower(?4)))"
    " AND (?5 OR label = 1)"
    " AND (?6 IS NULL OR (layer = ?6 AND head = ?7))"
    " AND (?8 IS NULL OR step = ?8)"
    " AND (?9 IS NULL OR series = ?9)";

/* Whether s is a step as andrea writes one (an integer): a hand-edited 'abc' is no step, where
 * strtoll read it as step 0. */
static int step_of(const char *s, long long *v) {
    char *end;
    if (!s || !*s) return 0;
    errno = 0;
    *v = strtoll(s, &end, 10);
    return !errno && !*end;
}

/* The pivot: rows of (model, series, step, layer, head, class, score, label) ordered by class,
 * head, step become one row per (class, head) and one column per step. */
static int col_of(const catalog_rows *r, const char *name) {
    for (int i = 0; i < r->n_cols; i++)
        if (!strcmp(r->col_names[i], name)) return i;
    return -1;
}

static int pivot_rows(const char *path, const catalog_rows *in, catalog_rows *out, ae_error *err) {
    /* columns by name: the heads query may gain columns */
    const int C_STEP = col_of(in, "step"), C_LAYER = col_of(in, "layer"), C_HEAD = col_of(in, "head"),
              C_CLASS = col_of(in, "class"), C_SCORE = col_of(in, "score"), C_LABEL = col_of(in, "label"),
              C_MODEL = col_of(in, "model"), C_SHA = col_of(in, "checkpoint_sha256");
    if (C_STEP < 0 || C_LAYER < 0 || C_HEAD < 0 || C_CLASS < 0 || C_SCORE < 0 || C_LABEL < 0)
        return andrea_fail(err, "%s: the heads query lacks a column the pivot needs", path);
    const size_t nc_in = (size_t)in->n_cols;
    long long *steps = malloc(((size_t)in->n_rows + 1) * sizeof *steps);
    int n_steps = 0, ret = -1;
    memset(out, 0, sizeof *out);
    if (!steps) return andrea_fail(err, "%s: out of memory", path);
    int n_stepless = 0;
    const char *stepless = NULL;
    for (int r = 0; r < in->n_rows; r++) {
        const char *s = in->cells[(size_t)r * nc_in + C_STEP];
        long long v;
        if (!step_of(s, &v)) {
            /* a checkpoint without a step has no column: counted for the note (rows are by class,
             * head, step, so one checkpoint's rows are apart; its sha256 tells them) */
            const char *sha = C_SHA >= 0 ? in->cells[(size_t)r * nc_in + C_SHA] : NULL;
            int seen = 0;
            for (int q = 0; q < r && sha && !seen; q++) {
                const char *qs = in->cells[(size_t)q * nc_in + C_SHA];
                long long u;
                seen = !step_of(in->cells[(size_t)q * nc_in + C_STEP], &u) && qs && !strcmp(qs, sha);
            }
            if (!seen) {
                n_stepless++;
                if (!stepless && C_MODEL >= 0) stepless = in->cells[(size_t)r * nc_in + C_MODEL];
            }
            continue;
        }
        int k = 0;
        while (k < n_steps && steps[k] < v) k++;
        if (k < n_steps && steps[k] == v) continue;
        memmove(steps + k + 1, steps + k, (size_t)(n_steps - k) * sizeof *steps);
        steps[k] = v;
        n_steps++;
    }
    if (n_steps == 0 && in->n_rows > 0) {
        free(steps);
        return andrea_fail(err, "%s: --pivot step: no checkpoint of the selection has a step (a name like run-step00400 "
                                "or analyze --step N gives one)", path);
    }
    if (n_stepless)
        snprintf(out->note, sizeof out->note, "--pivot step leaves out %d checkpoint%s without a step (%.200s%s): "
                 "name it run-stepN, or analyze it with --step N", n_stepless, n_stepless > 1 ? "s" : "",
                 stepless ? stepless : "?", n_stepless > 1 ? ", ..." : "");
    out->n_cols = 2 + n_steps;
    out->col_names = calloc((size_t)out->n_cols, sizeof(char *));
    if (!out->col_names) goto oom;
    out->col_names[0] = strdup("class");
    out->col_names[1] = strdup("head");
    for (int k = 0; k < n_steps; k++) {
        char b[40];
        snprintf(b, sizeof b, "step %lld", steps[k]);
        out->col_names[2 + k] = strdup(b);
    }
    for (int i = 0; i < out->n_cols; i++)
        if (!out->col_names[i]) goto oom;
    /* rows: distinct (class, layer, head) in input order (already sorted by class, layer, head) */
    out->cells = calloc(((size_t)in->n_rows + 1) * (size_t)out->n_cols, sizeof(char *));
    out->numeric = calloc(((size_t)in->n_rows + 1) * (size_t)out->n_cols, 1);
    if (!out->cells || !out->numeric) goto oom;
    char prev[160] = "";
    for (int r = 0; r < in->n_rows; r++) {
        const char *const *c = (const char *const *)in->cells + (size_t)r * nc_in;
        long long v;
        if (!step_of(c[C_STEP], &v) || !c[C_CLASS]) continue;
        char key[160];
        snprintf(key, sizeof key, "%s|%s.%s", c[C_CLASS], c[C_LAYER], c[C_HEAD]);
        char **row;
        if (strcmp(key, prev)) {
            snprintf(prev, sizeof prev, "%s", key);
            row = out->cells + (size_t)out->n_rows * (size_t)out->n_cols;
            out->n_rows++;
            char h[64];
            snprintf(h, sizeof h, "%s.%s", c[C_LAYER], c[C_HEAD]);
            if (!(row[0] = strdup(c[C_CLASS])) || !(row[1] = strdup(h))) goto oom;
        } else {
            row = out->cells + (size_t)(out->n_rows - 1) * (size_t)out->n_cols;
        }
        int k = 0;
        while (steps[k] != v) k++;
        if (row[2 + k] && C_MODEL >= 0 && c[C_MODEL]) {
            /* a second checkpoint at this step (the input is ordered by class, head, step): one
             * column cannot show both, and keeping either would hide the other */
            const char *const *first = (const char *const *)in->cells + (size_t)(r - 1) * nc_in;
            const char *sa = C_SHA >= 0 && first[C_SHA] ? first[C_SHA] : "", *sb = C_SHA >= 0 && c[C_SHA] ? c[C_SHA] : "";
            andrea_fail(err, "%s: --pivot step: two checkpoints at step %lld (%s %.12s and %s %.12s): select one with "
                             "--model (a name, path or sha256 prefix)", path, v, first[C_MODEL] ? first[C_MODEL] : "?", sa,
                        c[C_MODEL], sb);
            goto done;
        }
        if (!c[C_SCORE]) continue;
        char cell[64];
        snprintf(cell, sizeof cell, "%s%s", c[C_SCORE], c[C_LABEL] && !strcmp(c[C_LABEL], "1") ? "*" : "");
        free(row[2 + k]);
        if (!(row[2 + k] = strdup(cell))) goto oom;
        out->numeric[(size_t)(out->n_rows - 1) * (size_t)out->n_cols + 2 + (size_t)k] = 3;
    }
    ret = 0;
    goto done;
oom:
    andrea_fail(err, "%s: out of memory", path);
done:
    free(steps);
    return ret;
}

int andrea_catalog_heads(const char *path, const catalog_heads_filter *f, const catalog_limits *lim, catalog_rows *out,
                  ae_error *err) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int ret = -1;
    memset(out, 0, sizeof *out);
    if (open_ro(path, lim, &db, err)) return -1;
    if (check_schema(db, path, err)) goto fail;
    if ((ret = check_filter(db, path, f, err)) != 0 || (ret = check_selectors(db, path, f, err)) != 0 ||
        (ret = check_step(db, path, f, err)) != 0)
        goto fail;
    ret = -1;
    /* Every filter is a bound parameter; a NULL parameter disables its filter. */
    char sql[sizeof HEADS_SQL + 128];
    snprintf(sql, sizeof sql, "%s ORDER BY %s", HEADS_SQL,
             f->pivot_step ? "class, layer, head, step" : "step IS NULL, step, model, class, layer, head");
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (bind_filter(db, path, st, f, err)) goto fail;
    if (collect(db, path, st, lim, out, err)) goto fail;
    if (f->pivot_step) {
        catalog_rows p;
        if (pivot_rows(path, out, &p, err)) {
            andrea_catalog_rows_free(&p);
            goto fail;
        }
        andrea_catalog_rows_free(out);
        *out = p;
    }
    ret = 0;
fail:
    if (ret) andrea_catalog_rows_free(out);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return ret;
}

/* The read-only guard of `andrea sql`. The connection is already read-only with query_only on;
 * this refuses what could still reach other files or change state: ATTACH/DETACH (which could
 * create a database file), every write and schema change, and pragmas that set a value. */
static int sql_authorizer(void *ud, int action, const char *a1, const char *a2, const char *db_name,
                          const char *trigger) {
    (void)ud;
    (void)db_name;
    (void)trigger;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_UPDATE:
        /* A table-valued function (json_each over runs.settings, pragma_table_info) declares its
         * virtual table through an internal parse that reports updates of sqlite_master's
         * columns: allowed, since nothing can write it here (read-only connection, query_only,
         * writable_schema off, and sqlite3_stmt_readonly refuses the statement below). */
        return a1 && (!strcasecmp(a1, "sqlite_master") || !strcasecmp(a1, "sqlite_schema")) ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_FUNCTION:
        /* load_extension is off by default; refuse it by name as well. fts3_tokenizer('x') returns
         * the address of a tokenizer module (a pointer out of andrea's memory) and its two-argument
         * form installs one. */
        return a2 && (!strcasecmp(a2, "load_extension") || !strcasecmp(a2, "fts3_tokenizer")) ? SQLITE_DENY : SQLITE_OK;
    case SQLITE_PRAGMA: {
        /* Reading pragmas only: "PRAGMA x" (no argument) or the introspection pragmas whose
         * argument is a table name. "PRAGMA x = v" / "PRAGMA x(v)" on anything else is refused. */
        static const char *const lookups[] = {"table_info", "table_xinfo", "index_list", "index_info",
                                              "index_xinfo", "foreign_key_list", NULL};
        if (!a2) return SQLITE_OK;
        for (int i = 0; lookups[i]; i++)
            if (!strcasecmp(a1, lookups[i])) return SQLITE_OK;
        return SQLITE_DENY;
    }
    default:
        return SQLITE_DENY;
    }
}

int andrea_catalog_sql(const char *path, const char *sql, const catalog_limits *lim, catalog_rows *out, ae_error *err) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL, *st2 = NULL;
    int ret = -1;
    memset(out, 0, sizeof *out);
    if (open_ro(path, lim, &db, err)) return -1;
    SQL_CHECK(path, db, sqlite3_set_authorizer(db, sql_authorizer, NULL), SQLITE_OK);
    const char *tail = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, &tail);
    if (rc == SQLITE_AUTH) {
        andrea_fail(err, "%s: refused: andrea sql is read-only (no writes, ATTACH, or pragma settings)", path);
        goto fail;
    }
    if (rc != SQLITE_OK) {
        char why[512];
        andrea_fail(err, "%s: %s", path, andrea_sqlite_why(db, rc, why, sizeof why));
        goto fail;
    }
    if (!st) {
        andrea_fail(err, "%s: empty SQL statement", path);
        goto fail;
    }
    /* Whatever follows the first statement must be empty: whitespace, ';' or comments, which
     * prepare to no statement at all. */
    while (tail && *tail) {
        const char *next = NULL;
        rc = sqlite3_prepare_v2(db, tail, -1, &st2, &next);
        if (rc != SQLITE_OK || st2) {
            andrea_fail(err, "%s: only one SQL statement is allowed", path);
            goto fail;
        }
        if (next == tail) break;
        tail = next;
    }
    /* Belt and braces: whatever slipped past the authorizer must not write. */
    if (!sqlite3_stmt_readonly(st)) {
        andrea_fail(err, "%s: refused: the catalog is read-only here (use andrea classify to change it)", path);
        goto fail;
    }
    if (collect(db, path, st, lim, out, err)) goto fail;
    ret = 0;
fail:
    if (ret) andrea_catalog_rows_free(out);
    sqlite3_finalize(st);
    sqlite3_finalize(st2);
    sqlite3_close(db);
    return ret;
}

/* ---------- output ---------- */

/* Bytes of cell k: a text from SQLite may hold NUL bytes (rows from other producers are C strings). */
static size_t cell_len(const catalog_rows *r, size_t k) {
    return r->lens ? r->lens[k] : strlen(r->cells[k]);
}

/* A CSV field of n bytes (NULs kept: CSV carries the value as it is). */
static void csv_cell(FILE *out, const char *s, size_t n) {
    if (!s) return;
    int quote = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r') quote = 1;
    if (!quote) {
        fwrite(s, 1, n, out);
        return;
    }
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') fputc('"', out);
        fputc(s[i], out);
    }
    fputc('"', out);
}

/* A control character in a table cell: "\n", "\r", "\t" as written in C, others as "?" (they
 * would break the table's lines or the terminal). */
static const char *ctl_escape(unsigned char c) {
    return c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : (c < 0x20 || c == 0x7f) ? "?" : NULL;
}

/* Display width of n bytes of UTF-8 in code points, escapes counted (close enough for a terminal table). */
static size_t width(const char *s, size_t n) {
    size_t w = 0;
    for (size_t i = 0; s && i < n; i++) {
        const char *e = ctl_escape((unsigned char)s[i]);
        if (e) w += strlen(e);
        else if (((unsigned char)s[i] & 0xC0) != 0x80) w++;
    }
    return w;
}

/* What the table shows of cell k (its bytes in *n): a REAL (kept as %.17g) with 6 significant
 * digits, a pivot cell with 3 decimals and its "*" kept; buf holds the shortened text. */
static const char *table_text(const catalog_rows *r, size_t k, char *buf, size_t cap, size_t *n) {
    const char *c = r->cells[k];
    *n = 4;
    if (!c) return "NULL";
    *n = cell_len(r, k);
    if (r->numeric[k] == 2 || r->numeric[k] == 3) {
        char *end;
        double v = strtod(c, &end);
        /* a text where a number belongs (a hand-edited score 'abc') is shown as it is, not as 0.000abc */
        if (end == c || (*end && strcmp(end, "*"))) return c;
        snprintf(buf, cap, r->numeric[k] == 3 ? "%.3f%s" : "%.6g%s", v, end);
        *n = strlen(buf);
        return buf;
    }
    return c;
}

/* n bytes of s padded to width w; control bytes (a NUL of a text included) as ctl_escape shows them. */
static void table_cell(FILE *out, const char *s, size_t n, size_t w, int right) {
    const size_t sw = width(s, n), pad = w > sw ? w - sw : 0;
    if (right)
        for (size_t i = 0; i < pad; i++) fputc(' ', out);
    for (size_t i = 0; i < n; i++) {
        const char *e = ctl_escape((unsigned char)s[i]);
        if (e) fputs(e, out);
        else fputc(s[i], out);
    }
    if (!right)
        for (size_t i = 0; i < pad; i++) fputc(' ', out);
}

/* A JSON string of n bytes that hold NUL bytes: cJSON's strings end at the first, so each piece
 * between NULs is escaped by cJSON and the pieces joined with \u0000, as a raw JSON value. */
static cJSON *json_string_with_nuls(const char *s, size_t n) {
    andrea_buf b = {0};
    andrea_buf_puts(&b, "\"");
    for (size_t i = 0; i <= n && !andrea_buf_failed(&b);) {
        const size_t piece = strnlen(s + i, n - i);
        char *text = strndup(s + i, piece);
        cJSON *str = text ? cJSON_CreateString(text) : NULL;
        char *quoted = str ? cJSON_PrintUnformatted(str) : NULL;
        const int ok = quoted && andrea_buf_add(&b, quoted + 1, strlen(quoted) - 2) == 0; /* without its quotes */
        cJSON_free(quoted);
        cJSON_Delete(str);
        free(text);
        if (!ok) {
            andrea_buf_free(&b);
            return NULL;
        }
        i += piece + 1;
        if (i <= n) andrea_buf_puts(&b, "\\u0000");
    }
    andrea_buf_puts(&b, "\"");
    cJSON *v = andrea_buf_failed(&b) ? NULL : cJSON_CreateRaw(b.s);
    andrea_buf_free(&b);
    return v;
}

/* JSON keys for the columns: a name given twice (SELECT a.x, b.x) would make an object with one
 * key twice, which most readers collapse to its last value, silently losing a column. The first
 * column keeps its name; a later one gets the first of NAME_2, NAME_3, ... that is no column's
 * name and no key given before. Returns an array of nc strings, or NULL when out of memory. */
static char **json_keys(const catalog_rows *r) {
    const int nc = r->n_cols;
    char **k = calloc(nc ? (size_t)nc : 1, sizeof *k);
    if (!k) return NULL;
    for (int i = 0; i < nc; i++) {
        const char *name = r->col_names[i];
        andrea_buf b = {0};
        for (int n = 1;; n++) {
            andrea_buf_free(&b);
            if (n == 1) andrea_buf_puts(&b, name);
            else andrea_buf_printf(&b, "%s_%d", name, n);
            if (andrea_buf_failed(&b)) break;
            int taken = 0;
            for (int j = 0; j < i && !taken; j++) taken = !strcmp(k[j], b.s);
            for (int j = 0; n > 1 && j < nc && !taken; j++) taken = !strcmp(r->col_names[j], b.s);
            if (!taken) break;
        }
        if (andrea_buf_failed(&b)) {
            for (int j = 0; j < i; j++) free(k[j]);
            free(k);
            return NULL;
        }
        k[i] = b.s;
    }
    return k;
}

/* One JSON array of objects, one per row; numbers as numbers, BLOBs as their x'..' text. Printed
 * a row at a time: the whole array as cJSON nodes, then as one string, held 3 to 6 times the
 * result's 1 GiB limit (20 million rows took 5.8 GB). */
static int write_json(FILE *out, const catalog_rows *r, ae_error *err) {
    const size_t nc = (size_t)r->n_cols;
    char **keys = json_keys(r);
    int ret = keys ? 0 : -1;
    if (!ret) fputc('[', out);
    for (int row = 0; row < r->n_rows && !ret; row++) {
        cJSON *o = cJSON_CreateObject();
        ret = o ? 0 : -1;
        for (size_t i = 0; i < nc && !ret; i++) {
            size_t k = (size_t)row * nc + i;
            const char *c = r->cells[k];
            /* numbers as SQLite gave them (a REAL as %.17g: exact round trip); inf is no JSON */
            const int finite = c && r->numeric[k] && r->numeric[k] != 3 && strspn(c, "0123456789+-.eE") == strlen(c);
            const size_t n = c ? cell_len(r, k) : 0;
            cJSON *v = !c ? cJSON_CreateNull()
                     : finite ? cJSON_CreateRaw(c)
                     : r->numeric[k] && r->numeric[k] != 3 ? cJSON_CreateNull()
                     : n != strlen(c) ? json_string_with_nuls(c, n)
                                      : cJSON_CreateString(c);
            if (!v || !cJSON_AddItemToObject(o, keys[i], v)) {
                cJSON_Delete(v);
                ret = -1;
            }
        }
        char *s = ret ? NULL : cJSON_Print(o);
        if (s) {
            if (row) fputs(", ", out);
            fputs(s, out);
        } else {
            ret = -1;
        }
        cJSON_free(s);
        cJSON_Delete(o);
    }
    if (!ret) fputs("]\n", out);
    if (ret) andrea_fail(err, "out of memory for the JSON of a row (a value of hundreds of MB escaped six bytes a control "
                              "character?): use --format csv");
    for (size_t i = 0; keys && i < nc; i++) free(keys[i]);
    free(keys);
    return ret;
}

int andrea_catalog_rows_write(FILE *out, const catalog_rows *r, catalog_format fmt, ae_error *err) {
    size_t nc = (size_t)r->n_cols;
    if (fmt == CATALOG_CSV) {
        for (size_t i = 0; i < nc; i++) {
            if (i) fputc(',', out);
            csv_cell(out, r->col_names[i], strlen(r->col_names[i]));
        }
        fputs("\r\n", out);
        for (int row = 0; row < r->n_rows; row++) {
            for (size_t i = 0; i < nc; i++) {
                if (i) fputc(',', out);
                const size_t k = (size_t)row * nc + i;
                csv_cell(out, r->cells[k], r->cells[k] ? cell_len(r, k) : 0);
            }
            fputs("\r\n", out);
        }
    } else if (fmt == CATALOG_JSON) {
        if (write_json(out, r, err)) return -1;
    } else {
        size_t *w = calloc(nc ? nc : 1, sizeof *w);
        unsigned char *num = calloc(nc ? nc : 1, 1);
        if (!w || !num) {
            free(w);
            free(num);
            return andrea_fail(err, "out of memory");
        }
        for (size_t i = 0; i < nc; i++) {
            w[i] = width(r->col_names[i], strlen(r->col_names[i]));
            num[i] = r->n_rows > 0;
        }
        for (int row = 0; row < r->n_rows; row++)
            for (size_t i = 0; i < nc; i++) {
                size_t k = (size_t)row * nc + i;
                char buf[64];
                size_t n;
                const char *t = table_text(r, k, buf, sizeof buf, &n);
                size_t cw = width(t, n);
                if (cw > w[i]) w[i] = cw;
                if (r->cells[k] && !r->numeric[k]) num[i] = 0;
            }
        for (size_t i = 0; i < nc; i++) {
            if (i) fputs("  ", out);
            table_cell(out, r->col_names[i], strlen(r->col_names[i]), i + 1 < nc || num[i] ? w[i] : 0, num[i]);
        }
        fputc('\n', out);
        for (int row = 0; row < r->n_rows; row++) {
            for (size_t i = 0; i < nc; i++) {
                if (i) fputs("  ", out);
                /* no padding after a left-aligned last column: no trailing blanks */
                char buf[64];
                size_t n;
                const char *t = table_text(r, (size_t)row * nc + i, buf, sizeof buf, &n);
                table_cell(out, t, n, i + 1 < nc || num[i] ? w[i] : 0, num[i]);
            }
            fputc('\n', out);
        }
        free(w);
        free(num);
    }
    if (ferror(out)) return andrea_fail(err, "write error on output");
    return 0;
}
