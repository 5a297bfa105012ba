/* catalog_diff.c — two checkpoints of the catalog side by side (see catalog_diff.h). */
#include "catalog_diff.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/checkpoint_step.h"
#include "../common/buf.h"
#include "sqlite_time_limit.h"
#include "catalog.h"
#include "catalog_open.h"
#include "catalog_sql.h"

typedef struct {
    char name[256];
    char sha256[65];
    char path[512];
    long long step; /* -1: unknown */
    long long model; /* its models.id */
    int n_layer, n_head, d_model;
} checkpoint_row;

/* Every analysed checkpoint (a model with at least one run). */
static int list_checkpoints(sqlite3 *db, const char *path, checkpoint_row **out, int *n, ae_error *err) {
    sqlite3_stmt *st = NULL;
    size_t cap = 16;
    int rc;
    *n = 0;
    *out = malloc(sizeof **out * cap);
    if (!*out) return andrea_fail(err, "%s: out of memory", path);
    /* a catalog holding only circuit scores (andrea circuits --db) has no analysed checkpoint */
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('models', 'runs')",
                                 -1, &st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
    const int tables = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    if (tables < 2) return 0;
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "SELECT m.name, m.step, m.id, m.n_layer, m.n_head, m.d_model, m.sha256, m.path"
                                 " FROM models m JOIN runs r ON r.model_id = m.id GROUP BY m.id ORDER BY m.name, m.step",
                                 -1, &st, NULL),
              SQLITE_OK);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (andrea_grow(out, &cap, (size_t)*n + 1, sizeof **out, 16)) {
            andrea_fail(err, "%s: out of memory", path);
            goto fail;
        }
        checkpoint_row *c = &(*out)[(*n)++];
        const char *name = (const char *)sqlite3_column_text(st, 0);
        snprintf(c->name, sizeof c->name, "%s", name ? name : "");
        c->step = -1;
        if (sqlite3_column_type(st, 1) != SQLITE_NULL) c->step = sqlite3_column_int64(st, 1);
        else if (!andrea_step_from_name(c->name, &c->step)) c->step = -1;
        c->model = sqlite3_column_int64(st, 2);
        c->n_layer = sqlite3_column_int(st, 3);
        c->n_head = sqlite3_column_int(st, 4);
        c->d_model = sqlite3_column_int(st, 5);
        const char *sha = (const char *)sqlite3_column_text(st, 6), *p = (const char *)sqlite3_column_text(st, 7);
        snprintf(c->sha256, sizeof c->sha256, "%s", sha ? sha : "");
        snprintf(c->path, sizeof c->path, "%s", p ? p : "");
    }
    SQL_CHECK(path, db, rc, SQLITE_DONE);
    sqlite3_finalize(st);
    return 0;
fail:
    sqlite3_finalize(st);
    free(*out);
    *out = NULL;
    return -1;
}

/* 1 when two checkpoints of the list would read the same as NAME[@STEP]. */
static int shares_label(const checkpoint_row *cps, int n, int i) {
    for (int j = 0; j < n; j++)
        if (j != i && cps[j].step == cps[i].step && !strcmp(cps[j].name, cps[i].name)) return 1;
    return 0;
}

/* Appends ", NAME[@STEP]" for cps[i] to list (cap bytes), with its sha256 prefix and path when
 * another checkpoint reads the same (or always, when `full`), so the user can tell them apart. */
static void describe(char *list, size_t cap, const checkpoint_row *cps, int n, int i, int full) {
    const size_t used = strlen(list);
    const checkpoint_row *c = &cps[i];
    char step[32] = "";
    if (c->step >= 0) snprintf(step, sizeof step, "@%lld", c->step);
    if (full || shares_label(cps, n, i))
        snprintf(list + used, cap - used, "%s%s%s (sha256 %.12s, %s)", used ? ", " : "", c->name, step, c->sha256, c->path);
    else
        snprintf(list + used, cap - used, "%s%s%s", used ? ", " : "", c->name, step);
}

/* Does checkpoint c match selector name (without @STEP; real: the file it names, resolved, or "")
 * in pass 0 (model name), 1 (series), 2 (the model path as recorded, which the dump keeps
 * absolute, so the file named is compared resolved too) or 3 (a sha256 prefix of 4+ hex digits)? */
static int matches(const checkpoint_row *c, const char *name, const char *real, int pass) {
    char series[256];
    switch (pass) {
    case 0: return !strcmp(c->name, name);
    case 1: andrea_catalog_series_from_name(c->name, series, sizeof series); return !strcmp(series, name);
    case 2: return !strcmp(c->path, name) || (real[0] && !strcmp(c->path, real));
    default: {
        const size_t n = strlen(name);
        if (n < 4 || n > 64 || strspn(name, "0123456789abcdefABCDEF") != n) return 0;
        for (size_t k = 0; k < n; k++)
            if (tolower((unsigned char)name[k]) != c->sha256[k]) return 0;
        return 1;
    }
    }
}

/* The first pass with a match decides (model names, then series, paths, sha256 prefixes); in it
 * the highest step wins (only step `step` when it is >= 0), and two checkpoints tied there are
 * ambiguous (*tied = 1), never picked at random. Returns the index into cps, -1 when none matches. */
static int pick_checkpoint(const checkpoint_row *cps, int n, const char *name, long long step, int *tied) {
    char real[PATH_MAX];
    if (!realpath(name, real)) real[0] = 0; /* not a file here: compared as written only */
    int pick = -1;
    *tied = 0;
    for (int pass = 0; pass < 4 && pick < 0; pass++)
        for (int i = 0; i < n; i++) {
            if (!matches(&cps[i], name, real, pass) || (step >= 0 && cps[i].step != step)) continue;
            if (pick >= 0 && cps[i].step == cps[pick].step) *tied = 1;
            else if (pick < 0 || cps[i].step > cps[pick].step) pick = i, *tied = 0;
        }
    return pick;
}

/* "NAME@STEP" -> name and step (-1: no '@'; -2: an '@' not followed by a step 0..LLONG_MAX). */
static long long split_step(const char *sel, char *name, size_t cap) {
    const char *at = strrchr(sel, '@');
    snprintf(name, cap, "%.*s", at ? (int)(at - sel) : (int)strlen(sel), sel);
    if (!at) return -1;
    char *end;
    errno = 0; /* a step beyond long long was read as LLONG_MAX and matched "no checkpoint" */
    long long step;
    if (!isdigit((unsigned char)at[1]) || (step = strtoll(at + 1, &end, 10), *end) || errno || step < 0) return -2;
    return step;
}

/* Resolves "SELECTOR[@STEP]" (option names the flag for messages) to an index into cps. A selector
 * whose '@' starts no step, or whose NAME@STEP matches nothing, is tried whole too: a file or
 * folder may hold an '@' (run@v2.bin, /data/exp@home/ckpt.bin). */
static int resolve(const char *path, const char *option, const char *sel, const checkpoint_row *cps, int n, int *pick,
                   ae_error *err) {
    char name[512];
    const long long step = split_step(sel, name, sizeof name);
    int tied = 0;
    *pick = step >= -1 ? pick_checkpoint(cps, n, name, step, &tied) : -1;
    if (*pick < 0 && step != -1) {
        snprintf(name, sizeof name, "%s", sel);
        *pick = pick_checkpoint(cps, n, name, -1, &tied);
    }
    if (*pick < 0 && step == -2) {
        andrea_fail(err, "%s: %s '%s': STEP after '@' must be a whole number 0..%lld", path, option, sel, LLONG_MAX);
        return CATALOG_DIFF_USAGE;
    }
    char real[PATH_MAX];
    if (!realpath(name, real)) real[0] = 0;
    char list[600] = "";
    if (*pick >= 0 && !tied) return 0;
    if (*pick >= 0) { /* exit 2 with the tied checkpoints, told apart by sha256 and path */
        for (int pass = 0, done = 0; pass < 4 && !done; pass++)
            for (int i = 0; i < n; i++)
                if (matches(&cps[i], name, real, pass) && cps[i].step == cps[*pick].step && strlen(list) < sizeof list - 80)
                    describe(list, sizeof list, cps, n, i, 1), done = 1;
        andrea_fail(err, "%s: %s '%s' is ambiguous: it matches %s; select one by a sha256 prefix (4+ hex digits) or "
                         "its path", path, option, sel, list);
        return CATALOG_DIFF_USAGE;
    }
    /* exit 2 with the checkpoints that exist (as many as fit in one line) */
    for (int i = 0; i < n; i++) {
        if (strlen(list) >= sizeof list - 120) {
            snprintf(list + strlen(list), sizeof list - strlen(list), ", ... (%d in all)", n);
            break;
        }
        describe(list, sizeof list, cps, n, i, 0);
    }
    andrea_fail(err, "%s: %s '%s' matches no checkpoint; the catalog holds: %s", path, option, sel,
                n ? list : "(no analysed checkpoint)");
    return CATALOG_DIFF_USAGE;
}

static int collect(sqlite3 *db, const char *path, sqlite3_stmt *st, catalog_rows *out, ae_error *err) {
    memset(out, 0, sizeof *out);
    const int nc = sqlite3_column_count(st);
    size_t cap = 64 * (size_t)nc, ncap = cap; /* cells (rows x nc) of cells and numeric */
    out->col_names = calloc((size_t)nc, sizeof(char *));
    out->cells = calloc(cap, sizeof(char *));
    out->numeric = calloc(cap, 1);
    if (!out->col_names || !out->cells || !out->numeric) return andrea_fail(err, "%s: out of memory", path);
    out->n_cols = nc;
    for (int i = 0; i < nc; i++)
        if (!(out->col_names[i] = strdup(sqlite3_column_name(st, i)))) return andrea_fail(err, "%s: out of memory", path);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const size_t need = ((size_t)out->n_rows + 1) * (size_t)nc; /* nc <= SQLite's column limit */
        if (andrea_grow(&out->cells, &cap, need, sizeof(char *), 64) || andrea_grow(&out->numeric, &ncap, need, 1, 64))
            return andrea_fail(err, "%s: out of memory", path);
        const size_t base = (size_t)out->n_rows++ * nc;
        for (int i = 0; i < nc; i++) out->cells[base + i] = NULL;
        for (int i = 0; i < nc; i++) {
            const int t = sqlite3_column_type(st, i);
            char buf[64];
            /* as heads and sql: a REAL kept exact (%.17g) for CSV and JSON, the table shows 6 digits */
            out->numeric[base + i] = t == SQLITE_INTEGER ? 1 : t == SQLITE_FLOAT ? 2 : 0;
            if (t == SQLITE_NULL) continue;
            if (t == SQLITE_FLOAT) snprintf(buf, sizeof buf, "%.17g", sqlite3_column_double(st, i));
            const char *s = t == SQLITE_FLOAT ? buf : (const char *)sqlite3_column_text(st, i);
            if (!(out->cells[base + i] = strdup(s ? s : ""))) return andrea_fail(err, "%s: out of memory", path);
        }
    }
    char why[512];
    if (rc != SQLITE_DONE) return andrea_fail(err, "%s: query failed: %s", path, andrea_sqlite_why(db, rc, why, sizeof why));
    return 0;
}

/* One side: its checkpoint's current run of every class (docs/catalog.md: the newest run that
 * scored the class on it), as `heads` and the report read it: a later run of other suites does
 * not hide a class. Run on that side's own catalog, so both sides are read the same way whether
 * they come from one catalog or two. */
static const char *const SIDE_SQL =
    "WITH cur AS (SELECT su.class AS cls, max(su.run_id) AS run FROM suites su\n"
    "             JOIN runs r ON r.id = su.run_id WHERE r.model_id = ?1 GROUP BY su.class)\n"
    /* a score that is not a number (a hand-edited row) is no score: SQLite's '-' would read 'abc' as 0 */
    "SELECT s.layer, s.head, s.class, CASE WHEN typeof(s.score) IN ('integer', 'real') THEN s.score END,\n"
    "       (l.run_id IS NOT NULL)\n"
    "FROM cur JOIN head_scores s ON s.run_id = cur.run AND s.class = cur.cls\n"
    "LEFT JOIN labels l ON l.run_id = s.run_id AND l.layer = s.layer AND l.head = s.head AND l.class = s.class";

/* The two sides, copied into tables f and t of a scratch database in memory, joined. --changed
 * (?2) lists labels both sides measured and that differ. */
static const char *const JOIN_SQL =
    "WITH k AS (SELECT layer, head, class FROM f UNION SELECT layer, head, class FROM t)\n"
    "SELECT k.layer AS layer, k.head AS head, k.class AS class, f.score AS from_score, t.score AS to_score,\n"
    "       t.score - f.score AS delta, f.label AS from_label, t.label AS to_label,\n"
    "       CASE WHEN f.label = 0 AND t.label = 1 THEN 'gained' WHEN f.label = 1 AND t.label = 0 THEN 'lost'\n"
    "            ELSE '' END AS change\n"
    "FROM k LEFT JOIN f USING(layer, head, class) LEFT JOIN t USING(layer, head, class)\n"
    "WHERE (?1 IS NULL OR k.class = ?1) AND (NOT ?2 OR f.label <> t.label)\n"
    "ORDER BY abs(t.score - f.score) IS NULL, abs(t.score - f.score) DESC, k.layer, k.head, k.class";

/* A catalog diff reads: its path, its read-only connection and its analysed checkpoints. */
typedef struct {
    const char *path;
    sqlite3 *db;
    checkpoint_row *cps;
    int n;
} diff_catalog;

static int open_catalog(const char *path, diff_catalog *c, ae_error *err) {
    c->path = path;
    if (andrea_catalog_open_ro(path, &c->db, err)) return -1;
    if (andrea_catalog_refuse_newer(c->db, path, NULL, err)) return -1;
    return list_checkpoints(c->db, path, &c->cps, &c->n, err);
}

static void close_catalog(diff_catalog *c) {
    free(c->cps);
    sqlite3_close(c->db);
    memset(c, 0, sizeof *c);
}

/* Copies checkpoint `model`'s side (SIDE_SQL on catalog c) into table `table` of mem, each value
 * with its own type (an integer stays an integer, a NULL a NULL), so the join reads what one query
 * over the catalog would. Errors name c's path. */
static int copy_side(const diff_catalog *c, long long model, sqlite3 *mem, const char *table, ae_error *err) {
    sqlite3_stmt *st = NULL, *ins = NULL;
    char sql[64];
    int rc;
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (?1, ?2, ?3, ?4, ?5)", table);
    SQL_CHECK(c->path, c->db, sqlite3_prepare_v2(c->db, SIDE_SQL, -1, &st, NULL), SQLITE_OK);
    SQL_CHECK(c->path, c->db, sqlite3_bind_int64(st, 1, model), SQLITE_OK);
    SQL_CHECK(c->path, mem, sqlite3_prepare_v2(mem, sql, -1, &ins, NULL), SQLITE_OK);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < 5; i++)
            SQL_CHECK(c->path, mem, sqlite3_bind_value(ins, i + 1, sqlite3_column_value(st, i)), SQLITE_OK);
        SQL_CHECK(c->path, mem, sqlite3_step(ins), SQLITE_DONE);
        SQL_CHECK(c->path, mem, sqlite3_reset(ins), SQLITE_OK);
    }
    SQL_CHECK(c->path, c->db, rc, SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    return 0;
fail:
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    return -1;
}

/* How many suites of class cls checkpoint `model` of catalog c has, into *have. */
static int count_class(const diff_catalog *c, long long model, const char *cls, int *have, ae_error *err) {
    sqlite3_stmt *st = NULL;
    SQL_CHECK(c->path, c->db,
              sqlite3_prepare_v2(c->db, "SELECT count(*) FROM suites su JOIN runs r ON r.id = su.run_id"
                                        " WHERE r.model_id = ?1 AND su.class = ?2", -1, &st, NULL),
              SQLITE_OK);
    SQL_CHECK(c->path, c->db, sqlite3_bind_int64(st, 1, model), SQLITE_OK);
    SQL_CHECK(c->path, c->db, sqlite3_bind_text(st, 2, cls, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(c->path, c->db, sqlite3_step(st), SQLITE_ROW);
    *have += sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

/* The join of the two sides, in a scratch database in memory that has the catalogs' time limit. */
static int join_sides(const diff_catalog *fc, long long from, const diff_catalog *tc, long long to,
                      const catalog_diff_options *o, catalog_rows *out, ae_error *err) {
    sqlite3 *mem = NULL;
    sqlite3_stmt *st = NULL;
    const char *path = fc->path;
    int ret = -1;
    SQL_CHECK(path, NULL, sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
              SQLITE_OK);
    SQL_CHECK(path, mem, andrea_sqlite_time_limit(mem, andrea_sqlite_time_limit_default()), SQLITE_OK);
    /* no column types: a value keeps the type it had in its catalog */
    SQL_CHECK(path, mem,
              sqlite3_exec(mem, "CREATE TABLE f(layer, head, class, score, label);"
                                "CREATE TABLE t(layer, head, class, score, label)", NULL, NULL, NULL),
              SQLITE_OK);
    if (copy_side(fc, from, mem, "f", err) || copy_side(tc, to, mem, "t", err)) goto fail;
    SQL_CHECK(path, mem, sqlite3_prepare_v2(mem, JOIN_SQL, -1, &st, NULL), SQLITE_OK);
    if (o->class_name) SQL_CHECK(path, mem, sqlite3_bind_text(st, 1, o->class_name, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, mem, sqlite3_bind_int(st, 2, o->changed_only ? 1 : 0), SQLITE_OK);
    if (collect(mem, path, st, out, err)) goto fail;
    ret = 0;
fail:
    sqlite3_finalize(st);
    sqlite3_close(mem);
    return ret;
}

/* " of PATH" after a checkpoint's name when the two sides come from two catalogs, else "". */
static void of_catalog(char *buf, size_t cap, const diff_catalog *c, int two) {
    buf[0] = 0;
    if (two) snprintf(buf, cap, " of %s", c->path);
}

int andrea_catalog_diff(const char *from_db, const char *to_db, const catalog_diff_options *o, catalog_rows *out,
                        ae_error *err) {
    diff_catalog cat[2] = {{0}};
    const int two = to_db && strcmp(to_db, from_db);
    const diff_catalog *fc = &cat[0], *tc = &cat[two];
    int from, to, ret = -1, rc;
    memset(out, 0, sizeof *out);
    if (open_catalog(from_db, &cat[0], err) || (two && open_catalog(to_db, &cat[1], err))) goto fail;
    if ((rc = resolve(fc->path, "--from", o->from, fc->cps, fc->n, &from, err)) ||
        (rc = resolve(tc->path, "--to", o->to, tc->cps, tc->n, &to, err))) {
        ret = rc;
        goto fail;
    }
    const checkpoint_row *a = &fc->cps[from], *b = &tc->cps[to];
    char fa[600], tb[600];
    of_catalog(fa, sizeof fa, fc, two);
    of_catalog(tb, sizeof tb, tc, two);
    if (a->n_layer != b->n_layer || a->n_head != b->n_head || a->d_model != b->d_model) {
        andrea_fail(err, "%s: %s%s (%d layers x %d heads, d_model %d) and %s%s (%d x %d, d_model %d) have different "
                         "shapes; a diff compares the heads of one architecture",
                    tc->path, a->name, fa, a->n_layer, a->n_head, a->d_model, b->name, tb, b->n_layer, b->n_head,
                    b->d_model);
        goto fail;
    }
    if (o->class_name) { /* a class neither checkpoint scored is a mistake, not an empty answer */
        int have = 0;
        if (count_class(fc, a->model, o->class_name, &have, err) ||
            count_class(tc, b->model, o->class_name, &have, err))
            goto fail;
        if (!have) {
            andrea_fail(err, "%s: --class '%s': neither %s%s nor %s%s has scores of that class", tc->path,
                        o->class_name, a->name, fa, b->name, tb);
            ret = CATALOG_DIFF_USAGE;
            goto fail;
        }
    }
    if (join_sides(fc, a->model, tc, b->model, o, out, err)) goto fail;
    ret = 0;
fail:
    if (ret) andrea_catalog_rows_free(out);
    close_catalog(&cat[0]);
    close_catalog(&cat[1]);
    return ret;
}
