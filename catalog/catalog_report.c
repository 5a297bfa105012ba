/* catalog_report.c — a checkpoint's cells for its report, from the catalog (catalog_report.h). */
#include "catalog_report.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/checked_size.h"
#include "sqlite_check.h"
#include "catalog_open.h"

void andrea_catalog_report_rows_free(catalog_report_rows *d) {
    free(d->classes);
    free(d->scores);
    free(d->class_runs);
    free(d->steps);
    free(d->step_scores);
    d->classes = NULL;
    d->scores = d->step_scores = NULL;
    d->class_runs = NULL;
    d->steps = NULL;
    d->n_classes = d->n_steps = 0;
}

/* Names that differ only in their digits belong to one training run: "x_step100" -> "x_step#". */
static void run_key(const char *name, char *out, size_t cap) {
    size_t o = 0;
    for (const char *p = name; *p && o + 2 < cap; p++) {
        if (*p >= '0' && *p <= '9') {
            out[o++] = '#';
            while (p[1] >= '0' && p[1] <= '9') p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
}

typedef struct {
    int model, sha, step, layer, head, cls, score, baseline, ablation, label, latest, control, causal, series, run,
        run_time, evidence, method;
    long long dump_run; /* the run that scored the dump (runs.dump_seal), or -1 */
    char cur_name[16];  /* "current" or "latest" (schema 1), "" when the view has neither */
} view_cols;

static int find_cols(sqlite3_stmt *st, view_cols *c, const char *db_path, ae_error *err) {
    int *slots[] = {&c->model, &c->sha, &c->step, &c->layer, &c->head, &c->cls, &c->score, &c->baseline,
                    &c->ablation, &c->label, &c->latest, &c->control, &c->causal, &c->series, &c->run, &c->latest,
                    &c->run_time, &c->evidence, &c->method};
    static const char *const names[] = {"model", "checkpoint_sha256", "step", "layer", "head", "class", "score",
                                        "baseline", "ablation_delta", "label", "latest", "control", "causal",
                                        "series", "run", "current", "run_time", "evidence", "ablation"};
    enum { N_COLS = sizeof names / sizeof *names };
    c->dump_run = -1;
    for (int i = 0; i < N_COLS; i++) *slots[i] = -1;
    for (int j = 0; j < sqlite3_column_count(st); j++)
        for (int i = 0; i < N_COLS; i++)
            if (!strcmp(sqlite3_column_name(st, j), names[i])) *slots[i] = j;
    snprintf(c->cur_name, sizeof c->cur_name, "%s", c->latest >= 0 ? sqlite3_column_name(st, c->latest) : "");
    for (int i = 0; i < 10; i++) /* the first ten are required (docs/catalog.md) */
        if (*slots[i] < 0) return andrea_fail(err, "%s: view head_catalog has no column '%s'", db_path, names[i]);
    return 0;
}

/* A number of the view, or NaN (shown as "-") where the cell is NULL or not a number: SQLite
 * would turn the text 'abc' of a damaged or hand-edited catalog into 0, a score nobody measured. */
static double col_num(sqlite3_stmt *st, int c) {
    if (c < 0) return NAN;
    int t = sqlite3_column_type(st, c);
    return t == SQLITE_INTEGER || t == SQLITE_FLOAT ? sqlite3_column_double(st, c) : NAN;
}

/* A word of the view (a verdict, a method) into out, or "" where the cell is NULL, too long or
 * holds anything but a-z and '_' (a hand-edited catalog's text is shown as nothing, not as markup). */
static void col_word(sqlite3_stmt *st, int c, char *out, size_t cap) {
    const unsigned char *w = c >= 0 && sqlite3_column_type(st, c) == SQLITE_TEXT ? sqlite3_column_text(st, c) : NULL;
    size_t n = 0;
    out[0] = 0;
    for (; w && w[n]; n++)
        if (n + 1 >= cap || !((w[n] >= 'a' && w[n] <= 'z') || w[n] == '_')) return;
    if (w) memcpy(out, w, n + 1);
}

static int class_index(catalog_report_rows *d, const char *name, int add) {
    for (int c = 0; c < d->n_classes; c++)
        if (!strcmp(d->classes[c], name)) return c;
    if (!add) return -1;
    char (*nc)[64] = realloc(d->classes, (size_t)(d->n_classes + 1) * sizeof *nc);
    if (!nc) return -2;
    d->classes = nc;
    snprintf(d->classes[d->n_classes], 64, "%s", name);
    return d->n_classes++;
}

typedef struct {
    char sha[65];
    char name[256];
    double step;
} ckpt;

static int cmp_ckpt(const void *a, const void *b) {
    const ckpt *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    return strcmp(x->sha, y->sha);
}

static catalog_head_cell *alloc_scores(const catalog_report_rows *d, size_t n_sets) {
    size_t n;
    if (ae_mul((size_t)d->n_classes, (size_t)d->n_layer, &n) || ae_mul(n, (size_t)d->n_head, &n) ||
        ae_mul(n, n_sets, &n) || n == 0)
        return NULL;
    catalog_head_cell *s = malloc(n * sizeof *s);
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++) {
        s[i].score = s[i].baseline = s[i].control = s[i].ablation = NAN;
        s[i].label = 0;
        s[i].causal = -1;
        s[i].evidence[0] = s[i].ablation_method[0] = 0;
    }
    return s;
}

/* One checkpoint's cells as fill_scores gives them with no runs and no model name (the steps). */
typedef struct {
    char sha[65];
    catalog_head_cell *cells; /* [n_classes, L, H] */
} cached_set;

struct catalog_report_cache {
    char db_path[4096];
    int n_layer, n_head, n_classes;
    char (*classes)[64];
    int have_ck;             /* the checkpoint list below was read (with ck_sql) */
    char ck_sql[256];
    ckpt *ck;
    int n_ck;
    cached_set *sets;
    int n_sets;
};

catalog_report_cache *andrea_catalog_report_cache_new(void) { return calloc(1, sizeof(catalog_report_cache)); }

static void cache_clear(catalog_report_cache *c) {
    for (int i = 0; i < c->n_sets; i++) free(c->sets[i].cells);
    free(c->sets);
    free(c->ck);
    free(c->classes);
    memset(c, 0, sizeof *c);
}

void andrea_catalog_report_cache_free(catalog_report_cache *c) {
    if (!c) return;
    cache_clear(c);
    free(c);
}

/* The cache, emptied first unless it holds rows of this catalog in d's layout (shape and classes,
 * which the checkpoint's own rows have settled by now); NULL when there is none or no memory. */
static catalog_report_cache *cache_for(catalog_report_cache *c, const catalog_report_rows *d, const char *db_path) {
    if (!c) return NULL;
    int same = !strcmp(c->db_path, db_path) && c->n_layer == d->n_layer && c->n_head == d->n_head &&
               c->n_classes == d->n_classes;
    for (int k = 0; same && k < d->n_classes; k++) same = !strcmp(c->classes[k], d->classes[k]);
    if (same) return c;
    cache_clear(c);
    if (strlen(db_path) >= sizeof c->db_path || !(c->classes = malloc((size_t)(d->n_classes ? d->n_classes : 1) * sizeof *c->classes)))
        return NULL;
    snprintf(c->db_path, sizeof c->db_path, "%s", db_path);
    c->n_layer = d->n_layer;
    c->n_head = d->n_head;
    c->n_classes = d->n_classes;
    memcpy(c->classes, d->classes, (size_t)d->n_classes * sizeof *c->classes);
    return c;
}

/* Fills scores (one set) from the view's rows of checkpoint sha, and runs (NULL: not wanted, else
 * [n_classes]) with the run each class's rows came from (a rewritten report keeps the images of a
 * class while this run stays current: report_kept.h). */
static int fill_scores(catalog_report_rows *d, sqlite3 *db, const char *db_path, const char *sha, const view_cols *vc,
                       catalog_head_cell *set, catalog_run_ref *runs, char *model_name, size_t name_cap, ae_error *err) {
    sqlite3_stmt *st = NULL;
    char sql[512];
    /* vc->latest is the column `current` (or `latest` in a schema-1 catalog); the dump's own run,
     * when known, comes last so that its rows overwrite the current ones of its classes */
    const char *cur = vc->latest >= 0 ? vc->cur_name : NULL;
    const int own = vc->run >= 0 && vc->dump_run >= 0 && model_name;
    if (own)
        snprintf(sql, sizeof sql,
                 "SELECT * FROM head_catalog WHERE checkpoint_sha256 = ?1 AND (%s%srun = ?2) ORDER BY run = ?2",
                 cur ? cur : "", cur ? " OR " : "");
    else
        snprintf(sql, sizeof sql, "SELECT * FROM head_catalog WHERE checkpoint_sha256 = ?1%s%s", cur ? " AND " : "",
                 cur ? cur : "");
    SQL_CHECK(db_path, db, sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    SQL_CHECK(db_path, db, sqlite3_bind_text(st, 1, sha, -1, SQLITE_TRANSIENT), SQLITE_OK);
    if (own) SQL_CHECK(db_path, db, sqlite3_bind_int64(st, 2, vc->dump_run), SQLITE_OK);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, vc->layer) == SQLITE_NULL || sqlite3_column_type(st, vc->head) == SQLITE_NULL)
            continue; /* a row that names no head shows nowhere */
        const char *cls = (const char *)sqlite3_column_text(st, vc->cls);
        /* 64-bit: sqlite3_column_int keeps the low 32 bits, so layer 2^32+1 would land on layer 1 */
        sqlite3_int64 l = sqlite3_column_int64(st, vc->layer), h = sqlite3_column_int64(st, vc->head);
        if (!cls || l < 0 || h < 0 || l >= d->n_layer || h >= d->n_head) continue; /* not this model's shape */
        int c = class_index(d, cls, 0);
        if (c < 0) continue;
        catalog_head_cell *s = &set[((size_t)c * (size_t)d->n_layer + (size_t)l) * (size_t)d->n_head + (size_t)h];
        s->score = col_num(st, vc->score);
        s->baseline = col_num(st, vc->baseline);
        s->ablation = col_num(st, vc->ablation);
        s->control = col_num(st, vc->control);
        s->label = sqlite3_column_int64(st, vc->label) != 0;
        /* every field from this row, an unmeasured causal too: the dump's own run overwrites a
         * current run's cell, and a causal kept from that other run would mix two runs in one cell */
        s->causal = vc->causal >= 0 && sqlite3_column_type(st, vc->causal) != SQLITE_NULL
                        ? sqlite3_column_int64(st, vc->causal) != 0 : -1;
        col_word(st, vc->evidence, s->evidence, sizeof s->evidence);
        col_word(st, vc->method, s->ablation_method, sizeof s->ablation_method);
        /* the last row wins, as above; without `current` (schema 1) the rows are every run's */
        if (runs && vc->latest >= 0 && vc->run >= 0 && sqlite3_column_type(st, vc->run) == SQLITE_INTEGER) {
            const char *t = vc->run_time >= 0 ? (const char *)sqlite3_column_text(st, vc->run_time) : NULL;
            runs[c].id = sqlite3_column_int64(st, vc->run);
            snprintf(runs[c].time, sizeof runs[c].time, "%s", t ? t : "");
        }
        const char *m = (const char *)sqlite3_column_text(st, vc->model);
        if (model_name && m) snprintf(model_name, name_cap, "%s", m);
    }
    SQL_CHECK(db_path, db, rc, SQLITE_DONE);
    sqlite3_finalize(st);
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

/* Checkpoint sha's cells of a training-run step into set ([n_cells]): from the cache, else read
 * (and kept there, where memory allows). */
static int step_cells(catalog_report_rows *d, catalog_report_cache *cache, sqlite3 *db, const char *db_path,
                      const char *sha, const view_cols *vc, catalog_head_cell *set, size_t n_cells, ae_error *err) {
    for (int i = 0; cache && i < cache->n_sets; i++)
        if (!strcmp(cache->sets[i].sha, sha)) {
            memcpy(set, cache->sets[i].cells, n_cells * sizeof *set);
            return 0;
        }
    if (fill_scores(d, db, db_path, sha, vc, set, NULL, NULL, 0, err)) return -1;
    cached_set *ns = cache ? realloc(cache->sets, (size_t)(cache->n_sets + 1) * sizeof *ns) : NULL;
    if (!ns) return 0;
    cache->sets = ns;
    if (!(ns[cache->n_sets].cells = malloc(n_cells * sizeof *set))) return 0;
    memcpy(ns[cache->n_sets].cells, set, n_cells * sizeof *set);
    snprintf(ns[cache->n_sets].sha, sizeof ns[cache->n_sets].sha, "%s", sha);
    cache->n_sets++;
    return 0;
}

/* The checkpoints that query sql lists (sha256, name, step) into *out (the caller frees it): from
 * the cache when it holds that query's answer, else read (and kept there, where memory allows). */
static int checkpoints_with_steps(sqlite3 *db, const char *db_path, const char *sql, catalog_report_cache *cache,
                                  ckpt **out, int *n_out, ae_error *err) {
    sqlite3_stmt *st = NULL;
    ckpt *ck = NULL;
    int n_ck = 0, rc;
    if (cache && cache->have_ck && !strcmp(cache->ck_sql, sql)) {
        if (cache->n_ck > 0 && !(ck = malloc((size_t)cache->n_ck * sizeof *ck))) goto oom;
        if (cache->n_ck > 0) memcpy(ck, cache->ck, (size_t)cache->n_ck * sizeof *ck);
        *out = ck;
        *n_out = cache->n_ck;
        return 0;
    }
    SQL_CHECK(db_path, db, sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *sha = (const char *)sqlite3_column_text(st, 0), *name = (const char *)sqlite3_column_text(st, 1);
        if (!sha || !name) continue;
        ckpt *nk = realloc(ck, (size_t)(n_ck + 1) * sizeof *nk);
        if (!nk) goto oom;
        ck = nk;
        snprintf(ck[n_ck].sha, sizeof ck[n_ck].sha, "%s", sha);
        snprintf(ck[n_ck].name, sizeof ck[n_ck].name, "%s", name);
        ck[n_ck].step = sqlite3_column_double(st, 2);
        n_ck++;
    }
    SQL_CHECK(db_path, db, rc, SQLITE_DONE);
    sqlite3_finalize(st);
    if (cache && (n_ck == 0 || (cache->ck = malloc((size_t)n_ck * sizeof *ck)))) { /* no memory: not kept */
        if (n_ck > 0) memcpy(cache->ck, ck, (size_t)n_ck * sizeof *ck);
        cache->n_ck = n_ck;
        cache->have_ck = 1;
        snprintf(cache->ck_sql, sizeof cache->ck_sql, "%s", sql);
    }
    *out = ck;
    *n_out = n_ck;
    return 0;
oom:
    andrea_fail(err, "%s: out of memory reading the catalog", db_path);
fail:
    sqlite3_finalize(st);
    free(ck);
    return -1;
}

int andrea_catalog_report_rows(catalog_report_rows *d, const char *db_path, ae_error *err) {
    const char *seal = d->seal;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    ckpt *ck = NULL;
    int n_ck = 0;
    view_cols vc;
    /* Read-only and never created: a missing catalog is an error, not an empty report. */
    if (andrea_catalog_open_ro(db_path, &db, err)) return -1;
    if (andrea_catalog_refuse_newer(db, db_path, NULL, err)) goto fail;
    if (sqlite3_prepare_v2(db, "SELECT * FROM head_catalog LIMIT 0", -1, &st, NULL) != SQLITE_OK) {
        andrea_fail(err, "%s: not an andrea catalog (no view head_catalog: %s)", db_path, sqlite3_errmsg(db));
        goto fail;
    }
    if (find_cols(st, &vc, db_path, err)) goto fail;
    sqlite3_finalize(st);
    st = NULL;
    /* the run that scored this very dump (catalogs of schema 2 record each run's dump seal) */
    if (seal && seal[0] && sqlite3_prepare_v2(db, "SELECT max(id) FROM runs WHERE dump_seal = ?1", -1, &st, NULL) == SQLITE_OK) {
        SQL_CHECK(db_path, db, sqlite3_bind_text(st, 1, seal, -1, SQLITE_TRANSIENT), SQLITE_OK);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
            vc.dump_run = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    st = NULL;

    /* classes: the caller's first (a dump's suites, in dump order), then any other class of this
     * model, by name */
    for (int i = 0; i < d->n_first; i++)
        if (class_index(d, d->first[i], 1) < -1) goto oom;
    SQL_CHECK(db_path, db,
                  sqlite3_prepare_v2(db, "SELECT DISTINCT class FROM head_catalog WHERE checkpoint_sha256 = ?1 ORDER BY class",
                                     -1, &st, NULL),
                  SQLITE_OK);
    SQL_CHECK(db_path, db, sqlite3_bind_text(st, 1, d->sha256, -1, SQLITE_TRANSIENT), SQLITE_OK);
    int rc, n_rows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(st, 0);
        n_rows++;
        if (c && class_index(d, c, 1) < -1) goto oom;
    }
    SQL_CHECK(db_path, db, rc, SQLITE_DONE);
    sqlite3_finalize(st);
    st = NULL;
    if (n_rows > 0) {
        if (!(d->scores = alloc_scores(d, 1)) || !(d->class_runs = calloc((size_t)d->n_classes, sizeof *d->class_runs)))
            goto oom;
        for (int c = 0; c < d->n_classes; c++) d->class_runs[c].id = -1;
        if (fill_scores(d, db, db_path, d->sha256, &vc, d->scores, d->class_runs, d->model, sizeof d->model, err))
            goto fail;
    }

    /* the training run this checkpoint belongs to, if any */
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT DISTINCT checkpoint_sha256, %s, step FROM head_catalog WHERE step IS NOT NULL%s%s",
             vc.series >= 0 ? "series" : "model", vc.latest >= 0 ? " AND " : "", vc.latest >= 0 ? vc.cur_name : "");
    catalog_report_cache *cache = cache_for(d->cache, d, db_path);
    if (checkpoints_with_steps(db, db_path, sql, cache, &ck, &n_ck, err)) goto fail;
    char my_key[256] = "";
    int have_me = 0;
    for (int i = 0; i < n_ck && !have_me; i++)
        if (!strcmp(ck[i].sha, d->sha256)) {
            if (vc.series >= 0) snprintf(my_key, sizeof my_key, "%s", ck[i].name);
            else run_key(ck[i].name, my_key, sizeof my_key);
            have_me = 1;
        }
    if (have_me) {
        int m = 0;
        for (int i = 0; i < n_ck; i++) {
            char k[256];
            if (vc.series >= 0) snprintf(k, sizeof k, "%s", ck[i].name);
            else run_key(ck[i].name, k, sizeof k);
            if (!strcmp(k, my_key)) ck[m++] = ck[i];
        }
        qsort(ck, (size_t)m, sizeof *ck, cmp_ckpt);
        if (m >= 2) {
            d->n_steps = m;
            snprintf(d->run_name, sizeof d->run_name, "%s", my_key);
            d->steps = malloc((size_t)m * sizeof *d->steps);
            d->step_scores = alloc_scores(d, (size_t)m);
            if (!d->steps || !d->step_scores) goto oom;
            size_t set = (size_t)d->n_classes * (size_t)d->n_layer * (size_t)d->n_head;
            for (int i = 0; i < m; i++) {
                d->steps[i] = ck[i].step;
                if (step_cells(d, cache, db, db_path, ck[i].sha, &vc, d->step_scores + (size_t)i * set, set, err))
                    goto fail;
            }
        }
    }
    free(ck);
    sqlite3_close(db);
    return 0;
oom:
    andrea_fail(err, "%s: out of memory reading the catalog", db_path);
fail:
    free(ck);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return -1;
}
