/* catalog_series.c — a checkpoint series' scores from the catalog (see catalog_series.h).
 * Reads the tables `models` and `suites` for names, steps, shapes, class order and rules, and the
 * view head_catalog (`current` rows) for scores and labels; opened read-only. */
#include "catalog_series.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "../common/checked_size.h"
#include "sqlite_check.h"
#include "catalog_open.h"

void andrea_series_free(series_data *d) {
    free(d->ck);
    free(d->classes);
    free(d->threshold);
    free(d->score);
    free(d->label);
    memset(d, 0, sizeof *d);
}

static int class_of(series_data *d, const char *name, int add) {
    for (int c = 0; c < d->n_classes; c++)
        if (!strcmp(d->classes[c], name)) return c;
    if (!add) return -1;
    char (*nc)[64] = realloc(d->classes, (size_t)(d->n_classes + 1) * sizeof *nc);
    double *nt = realloc(d->threshold, (size_t)(d->n_classes + 1) * sizeof *nt);
    if (nc) d->classes = nc;
    if (nt) d->threshold = nt;
    if (!nc || !nt) return -2;
    snprintf(d->classes[d->n_classes], 64, "%s", name);
    d->threshold[d->n_classes] = NAN;
    return d->n_classes++;
}

/* By step (numeric), one step's checkpoints by name (byte order); checkpoints without a step last,
 * in the caller's order. */
static void sort_by_step(series_checkpoint *ck, int n) {
    for (int i = 1; i < n; i++) {
        series_checkpoint t = ck[i];
        int j = i;
        while (j > 0 && t.has_step &&
               (!ck[j - 1].has_step || ck[j - 1].step > t.step ||
                (ck[j - 1].step == t.step && strcmp(ck[j - 1].name, t.name) > 0))) {
            ck[j] = ck[j - 1];
            j--;
        }
        ck[j] = t;
    }
}

/* Name, step, shape of each checkpoint; the classes in run order with their rules. */
static int load_meta(sqlite3 *db, const char *path, series_data *d, ae_error *err) {
    sqlite3_stmt *st = NULL, *cl = NULL;
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db, "SELECT name, step, n_layer, n_head, coalesce(series, name) FROM models WHERE sha256 = ?1",
                                 -1, &st, NULL),
              SQLITE_OK);
    /* newest run first; within a run, suites in dump order (their insertion order) */
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "SELECT s.class, s.min_score FROM suites s JOIN runs r ON r.id = s.run_id"
                                 " JOIN models m ON m.id = r.model_id WHERE m.sha256 = ?1 ORDER BY r.id DESC, s.rowid",
                                 -1, &cl, NULL),
              SQLITE_OK);
    char first[256] = "", second[256] = ""; /* the series of the checkpoints: one, two, or more */
    int more = 0;
    for (int i = 0; i < d->n_ck; i++) {
        series_checkpoint *c = &d->ck[i];
        SQL_CHECK(path, db, sqlite3_reset(st), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_text(st, 1, c->sha256, -1, SQLITE_STATIC), SQLITE_OK);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) {
            andrea_fail(err, "%s: no checkpoint with sha256 %.12s... in the catalog", path, c->sha256);
            goto fail;
        }
        SQL_CHECK(path, db, rc, SQLITE_ROW);
        snprintf(c->name, sizeof c->name, "%s", (const char *)sqlite3_column_text(st, 0));
        c->has_step = sqlite3_column_type(st, 1) == SQLITE_INTEGER;
        c->step = sqlite3_column_int64(st, 1);
        const int nl = sqlite3_column_int(st, 2), nh = sqlite3_column_int(st, 3);
        if (nl <= 0 || nh <= 0 || nl > 4096 || nh > 4096) {
            andrea_fail(err, "%s: checkpoint %s has an impossible shape (%d layers, %d heads)", path, c->name, nl, nh);
            goto fail;
        }
        c->n_layer = nl;
        c->n_head = nh;
        if (nl > d->n_layer) d->n_layer = nl;
        if (nh > d->n_head) d->n_head = nh;
        const char *series = (const char *)sqlite3_column_text(st, 4);
        if (!series) series = "";
        if (i == 0) snprintf(first, sizeof first, "%s", series);
        else if (strcmp(series, first) && !second[0]) snprintf(second, sizeof second, "%s", series);
        else if (strcmp(series, first) && strcmp(series, second)) more = 1;
        SQL_CHECK(path, db, sqlite3_reset(cl), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_text(cl, 1, c->sha256, -1, SQLITE_STATIC), SQLITE_OK);
        while ((rc = sqlite3_step(cl)) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(cl, 0);
            if (!name) continue;
            int k = class_of(d, name, 1);
            if (k == -2) {
                andrea_fail(err, "%s: out of memory", path);
                goto fail;
            }
            if (isnan(d->threshold[k])) d->threshold[k] = sqlite3_column_double(cl, 1);
        }
        SQL_CHECK(path, db, rc, SQLITE_DONE);
    }
    /* checkpoints of several series (analyze a.bin b.bin of two runs) are not one series: the page
     * says so rather than naming them all after the first */
    if (!second[0]) snprintf(d->name, sizeof d->name, "%s", first);
    else snprintf(d->name, sizeof d->name, "several series (%.100s, %.100s%s)", first, second, more ? ", ..." : "");
    sqlite3_finalize(st);
    sqlite3_finalize(cl);
    return 0;
fail:
    sqlite3_finalize(st);
    sqlite3_finalize(cl);
    return -1;
}

static int load_scores(sqlite3 *db, const char *path, series_data *d, ae_error *err) {
    sqlite3_stmt *st = NULL;
    const size_t per_ck = (size_t)d->n_classes * (size_t)d->n_layer * (size_t)d->n_head;
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "SELECT class, layer, head, score, label FROM head_catalog"
                                 " WHERE current AND checkpoint_sha256 = ?1",
                                 -1, &st, NULL),
              SQLITE_OK);
    for (int i = 0; i < d->n_ck; i++) {
        SQL_CHECK(path, db, sqlite3_reset(st), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_text(st, 1, d->ck[i].sha256, -1, SQLITE_STATIC), SQLITE_OK);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *cls = (const char *)sqlite3_column_text(st, 0);
            const sqlite3_int64 l = sqlite3_column_int64(st, 1), h = sqlite3_column_int64(st, 2);
            const int c = cls ? class_of(d, cls, 0) : -1;
            if (c < 0 || l < 0 || h < 0 || l >= d->n_layer || h >= d->n_head) continue;
            const size_t k = (size_t)i * per_ck + ((size_t)c * (size_t)d->n_layer + (size_t)l) * (size_t)d->n_head + (size_t)h;
            const int t = sqlite3_column_type(st, 3);
            d->score[k] = t == SQLITE_FLOAT || t == SQLITE_INTEGER ? sqlite3_column_double(st, 3) : NAN;
            d->label[k] = sqlite3_column_int(st, 4) != 0;
        }
        SQL_CHECK(path, db, rc, SQLITE_DONE);
    }
    sqlite3_finalize(st);
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

/* Into *out (256 bytes) the series of the checkpoint sha256 as load_meta reads it: 1, 0 when the
 * catalog has no such checkpoint, -1 (err). */
static int series_of(sqlite3 *db, const char *path, sqlite3_stmt *st, const char *sha256, char *out, ae_error *err) {
    SQL_CHECK(path, db, sqlite3_reset(st), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 1, sha256, -1, SQLITE_STATIC), SQLITE_OK);
    const int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) return 0;
    SQL_CHECK(path, db, rc, SQLITE_ROW);
    const char *s = (const char *)sqlite3_column_text(st, 0);
    snprintf(out, 256, "%s", s ? s : "");
    return 1;
fail:
    return -1;
}

/* Whether found checkpoint k joins the series: not given too (nor found before), and the catalog
 * holds it in the series of one of the given checkpoints. 1, 0, or -1 (err). */
static int joins(sqlite3 *db, const char *path, sqlite3_stmt *st, const series_input *in, int n, int k, ae_error *err) {
    char mine[256], theirs[256];
    for (int j = 0; j < n; j++)
        if ((!in[j].found || j < k) && !strcmp(in[j].sha256, in[k].sha256)) return 0;
    int rc = series_of(db, path, st, in[k].sha256, mine, err);
    for (int j = 0; j < n && rc == 1; j++) {
        if (in[j].found) continue;
        const int r = series_of(db, path, st, in[j].sha256, theirs, err);
        if (r < 0 || (r == 1 && !strcmp(mine, theirs))) return r;
    }
    return rc < 0 ? -1 : 0;
}

/* d->ck: the given checkpoints, and the found ones that join them (joins). */
static int pick_checkpoints(sqlite3 *db, const char *path, const series_input *in, int n, series_data *d, ae_error *err) {
    sqlite3_stmt *st = NULL;
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, "SELECT coalesce(series, name) FROM models WHERE sha256 = ?1", -1, &st, NULL),
              SQLITE_OK);
    for (int i = 0; i < n; i++) {
        const int keep = in[i].found ? joins(db, path, st, in, n, i, err) : 1;
        if (keep < 0) goto fail;
        if (!keep) continue;
        series_checkpoint *c = &d->ck[d->n_ck++];
        snprintf(c->sha256, sizeof c->sha256, "%s", in[i].sha256);
        snprintf(c->href, sizeof c->href, "%s", in[i].report_href ? in[i].report_href : "");
    }
    sqlite3_finalize(st);
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

int andrea_series_load(const char *path, const series_input *in, int n, series_data *d, ae_error *err) {
    sqlite3 *db = NULL;
    memset(d, 0, sizeof *d);
    if (n <= 0) return andrea_fail(err, "%s: a series needs at least one checkpoint", path);
    d->ck = calloc((size_t)n, sizeof *d->ck);
    if (!d->ck) return andrea_fail(err, "%s: out of memory", path);
    if (andrea_catalog_open_ro(path, &db, err)) goto fail;
    SQL_CHECK(path, db, sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL), SQLITE_OK);
    if (pick_checkpoints(db, path, in, n, d, err)) goto fail;
    if (d->n_ck <= 0) {
        andrea_fail(err, "%s: a series needs at least one checkpoint", path);
        goto fail;
    }
    if (load_meta(db, path, d, err)) goto fail;
    sort_by_step(d->ck, d->n_ck);
    size_t cells;
    if (ae_mul((size_t)d->n_ck, (size_t)(d->n_classes ? d->n_classes : 1), &cells) ||
        ae_mul(cells, (size_t)d->n_layer, &cells) || ae_mul(cells, (size_t)d->n_head, &cells)) {
        andrea_fail(err, "%s: series too large", path);
        goto fail;
    }
    d->score = malloc((cells ? cells : 1) * sizeof *d->score);
    d->label = calloc(cells ? cells : 1, 1);
    if (!d->score || !d->label) {
        andrea_fail(err, "%s: out of memory", path);
        goto fail;
    }
    for (size_t i = 0; i < cells; i++) d->score[i] = NAN;
    if (load_scores(db, path, d, err)) goto fail;
    sqlite3_close(db);
    return 0;
fail:
    sqlite3_close(db);
    andrea_series_free(d);
    return -1;
}
