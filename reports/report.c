/* report.c — andrea_render: gathers a report_data from a dump, a catalog and the model's
 * tokenizer, then hands it to andrea_report_write (see report.h, report_data.h).
 *
 * The catalog is read through SQL on the `head_catalog` view (docs/catalog.md columns: model,
 * checkpoint_sha256, step, layer, head, class, score, baseline, ablation_delta, label; the
 * optional columns `current` (or `latest` in catalogs of schema 1), `series`, `run` and `control`
 * are used when the view has them), opened read-only. Rows of this dump's checkpoint (matched by
 * sha256) give the scores: for each class the current run's (the newest run that scored that class
 * on that checkpoint), except that the run which scored THIS dump (runs.dump_seal = the dump's seal)
 * wins for the classes it scored, so re-rendering an older dump shows its own run.
 * Training runs: models of one series (the view's `series`; else names that differ only in their
 * digits, "x_step100", "x_step2000") that have a step form one run; when the dump's model belongs
 * to a run of two or more steps, the report plots each labelled head's score against step.
 * Token text comes from the tokenizer beside the checkpoint; when it cannot be opened (the
 * checkpoint moved), tokens are shown as "#id" and the index says why.
 */
#include "report.h"

#include <math.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/checked_size.h"
#include "../common/sqlite_check.h"
#include "../catalog/catalog_open.h"
#include "out_folder.h"
#include "../dump/dump.h"
#include "../tokenizer/tokenizer.h"
#include "../probes/probe.h"
#include "report_data.h"

typedef struct {
    andrea_dump *dump;
    andrea_tokenizer *tok;
} source;

static int tok_bytes(const report_data *d, int id, char *buf, size_t cap) {
    const source *src = d->ctx;
    if (id < 0) return -1;
    if (!src->tok) { /* no tokenizer beside the checkpoint: the text the dump stored (token_text) */
        int nb = andrea_dump_token_text(src->dump, id, buf, cap, NULL);
        return nb < 0 ? -1 : nb;
    }
    return andrea_tokenizer_token_bytes(src->tok, id, buf, cap);
}

static int read_map(const report_data *d, int s, int e, int l, int h, float *out, ae_error *err) {
    const source *src = d->ctx;
    return andrea_dump_read_map(src->dump, s, e, l, h, out, err);
}

void andrea_report_data_free(report_data *d) {
    for (int s = 0; s < d->n_suites; s++) {
        free(d->suites[s].n_tokens);
        free(d->suites[s].tokens);
        free(d->suites[s].target);
    }
    free(d->suites);
    free(d->classes);
    free(d->scores);
    free(d->class_runs);
    free(d->steps);
    free(d->step_scores);
}

/* Copies the first n_examples items of the dump's suite s (tokens and target matrix). */
static int load_suite(andrea_dump *dump, const char *dump_path, int s, int examples, report_suite *out, ae_error *err) {
    const andrea_dump_suite_info *info = andrea_dump_suite(dump, s);
    probe_suite ps;
    memset(&ps, 0, sizeof ps);
    if (andrea_dump_read_items(dump, s, &ps, err)) return -1;
    snprintf(out->name, sizeof out->name, "%s", info->name);
    out->T = info->T;
    out->n_seq = ps.n_items;
    out->n_examples = ps.n_items < examples ? ps.n_items : examples;
    int T = out->T, ne = out->n_examples;
    size_t nt, ntt;
    if (T < 1 || ae_mul((size_t)ne, (size_t)T, &nt) || ae_mul(nt, (size_t)T, &ntt)) {
        andrea_probe_suite_free(&ps);
        return andrea_fail(err, "%s: suite %s: bad map size T = %d", dump_path, info->name, T);
    }
    out->n_tokens = calloc((size_t)(ne ? ne : 1), sizeof *out->n_tokens);
    out->tokens = calloc(nt ? nt : 1, sizeof *out->tokens);
    out->target = calloc(ntt ? ntt : 1, 1);
    if (!out->n_tokens || !out->tokens || !out->target) {
        andrea_probe_suite_free(&ps);
        return andrea_fail(err, "%s: out of memory reading suite %s", dump_path, info->name);
    }
    for (int e = 0; e < ne; e++) {
        const probe_item *it = &ps.items[e];
        if (it->n_tokens < 1 || it->n_tokens > T) {
            andrea_probe_suite_free(&ps);
            return andrea_fail(err, "%s: suite %s item %d has %d tokens, outside 1..T=%d", dump_path, info->name, e,
                           it->n_tokens, T);
        }
        out->n_tokens[e] = it->n_tokens;
        memcpy(out->tokens + (size_t)e * (size_t)T, it->tokens, (size_t)it->n_tokens * sizeof(int));
        for (int j = 0; j < it->n_targets; j++) {
            int q = it->targets[j].query, k = it->targets[j].key;
            if (q < 0 || k < 0 || q >= it->n_tokens || k >= it->n_tokens) continue; /* reader checked; stay safe */
            out->target[((size_t)e * (size_t)T + (size_t)q) * (size_t)T + (size_t)k] = 1;
        }
    }
    andrea_probe_suite_free(&ps);
    return 0;
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

static int class_index(report_data *d, const char *name, int add) {
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

static report_score *alloc_scores(const report_data *d, size_t n_sets) {
    size_t n;
    if (ae_mul((size_t)d->n_classes, (size_t)d->n_layer, &n) || ae_mul(n, (size_t)d->n_head, &n) ||
        ae_mul(n, n_sets, &n) || n == 0)
        return NULL;
    report_score *s = malloc(n * sizeof *s);
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++) {
        s[i].score = s[i].baseline = s[i].control = s[i].ablation = NAN;
        s[i].label = 0;
        s[i].causal = -1;
        s[i].evidence[0] = s[i].ablation_method[0] = 0;
    }
    return s;
}

/* Fills scores (one set) from the view's rows of checkpoint sha, and runs (NULL: not wanted, else
 * [n_classes]) with the run each class's rows came from (a rewritten report keeps the images of a
 * class while this run stays current: report_kept.h). */
static int fill_scores(report_data *d, sqlite3 *db, const char *db_path, const char *sha, const view_cols *vc,
                       report_score *set, report_run *runs, char *model_name, size_t name_cap, ae_error *err) {
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
        report_score *s = &set[((size_t)c * (size_t)d->n_layer + (size_t)l) * (size_t)d->n_head + (size_t)h];
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

int andrea_report_load_catalog(report_data *d, const char *db_path, const char *seal, ae_error *err) {
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

    /* classes: the dump's suites first, in dump order, then any other class of this model, by name */
    for (int s = 0; s < d->n_suites; s++)
        if (class_index(d, d->suites[s].name, 1) < -1) goto oom;
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
    SQL_CHECK(db_path, db, sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    char my_key[256] = "";
    int have_me = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *sha = (const char *)sqlite3_column_text(st, 0), *name = (const char *)sqlite3_column_text(st, 1);
        if (!sha || !name) continue;
        ckpt *nk = realloc(ck, (size_t)(n_ck + 1) * sizeof *nk);
        if (!nk) goto oom;
        ck = nk;
        snprintf(ck[n_ck].sha, sizeof ck[n_ck].sha, "%s", sha);
        snprintf(ck[n_ck].name, sizeof ck[n_ck].name, "%s", name);
        ck[n_ck].step = sqlite3_column_double(st, 2);
        if (!strcmp(sha, d->sha256)) {
            if (vc.series >= 0) snprintf(my_key, sizeof my_key, "%s", name);
            else run_key(name, my_key, sizeof my_key);
            have_me = 1;
        }
        n_ck++;
    }
    SQL_CHECK(db_path, db, rc, SQLITE_DONE);
    sqlite3_finalize(st);
    st = NULL;
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
                if (fill_scores(d, db, db_path, ck[i].sha, &vc, d->step_scores + (size_t)i * set, NULL, NULL, 0, err))
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

int andrea_render(const char *dump_path, const char *db_path, const char *out_dir, const andrea_render_options *opt,
                  ae_error *err) {
    report_data *d = calloc(1, sizeof *d);
    source src = {NULL, NULL};
    int rc = -1;
    if (!d) return andrea_fail(err, "%s: out of memory", out_dir);
    if (andrea_out_folder_check(out_dir, OUT_FOLDER_REPORT, err) ||
        andrea_out_folder_check_input(out_dir, dump_path, "dump", err) ||
        andrea_out_folder_check_input(out_dir, db_path, "catalog", err)) {
        free(d);
        return -1;
    }
    int examples = andrea_render_examples(opt);

    if (!(src.dump = andrea_dump_open(dump_path, err))) goto done;
    const andrea_config *cfg = andrea_dump_config(src.dump);
    d->n_layer = cfg->n_layer;
    d->n_head = cfg->n_head;
    d->d_model = cfg->d_model;
    d->vocab_size = cfg->vocab_size;
    const char *ck = andrea_dump_checkpoint_path(src.dump);
    snprintf(d->ckpt_path, sizeof d->ckpt_path, "%s", ck ? ck : "");
    snprintf(d->sha256, sizeof d->sha256, "%s", andrea_dump_checkpoint_sha256(src.dump));
    snprintf(d->maps_dtype, sizeof d->maps_dtype, "%s", andrea_dump_maps_dtype(src.dump));
    snprintf(d->dump_path, sizeof d->dump_path, "%s", dump_path);
    snprintf(d->db_path, sizeof d->db_path, "%s", db_path);
    /* display name until the catalog gives one: the checkpoint's base name */
    const char *base = strrchr(d->ckpt_path, '/');
    snprintf(d->model, sizeof d->model, "%.255s", base && base[1] ? base + 1 : d->ckpt_path);

    /* tokenizer: from the checkpoint's folder; its absence only costs the token text */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", d->ckpt_path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    ae_error terr = {{0}};
    src.tok = andrea_tokenizer_open(d->vocab_size, dir, NULL, &terr);
    /* a tokenizer swapped beside the checkpoint since the dump would label its tokens wrongly */
    const char *want = andrea_dump_tokenizer_vocab_sha256(src.dump);
    char have[65];
    int swapped = 0;
    if (src.tok && want[0] && (andrea_dump_tokenizer_sha256(src.tok, d->vocab_size, have) || strcmp(have, want))) {
        swapped = 1;
        andrea_tokenizer_free(src.tok);
        src.tok = NULL;
        snprintf(terr.msg, sizeof terr.msg, "the tokenizer in %.300s is not the one the dump was made with", dir);
    }
    int stored = 0; /* without a tokenizer: does the dump hold token text (token_text)? */
    char probe_text[8];
    for (int id = 0; !src.tok && id < d->vocab_size && !stored; id++) {
        int r = andrea_dump_token_text(src.dump, id, probe_text, sizeof probe_text, NULL);
        if (r == -2) break;
        stored = r >= 0;
    }
    if (!src.tok && !stored)
        snprintf(d->note, sizeof d->note, "Token text unavailable (%.400s); tokens are shown as #id.", terr.msg);
    else if (!src.tok)
        snprintf(d->note, sizeof d->note, "Token text from the dump (%s%.400s).", swapped ? "" : "no tokenizer found: ", terr.msg);
    d->bos = src.tok ? andrea_tokenizer_bos(src.tok) : -1;
    d->token_bytes = tok_bytes;
    d->read_map = read_map;
    d->ctx = &src;

    int ns = andrea_dump_n_suites(src.dump);
    d->suites = calloc((size_t)(ns > 0 ? ns : 1), sizeof *d->suites);
    if (!d->suites) {
        andrea_fail(err, "%s: out of memory", dump_path);
        goto done;
    }
    for (int s = 0; s < ns; s++) {
        d->n_suites = s + 1;
        if (load_suite(src.dump, dump_path, s, examples, &d->suites[s], err)) goto done;
    }
    if (andrea_report_load_catalog(d, db_path, andrea_dump_seal_hex(src.dump), err)) goto done;
    rc = andrea_report_write(d, out_dir, opt, err);
done:
    if (src.tok) andrea_tokenizer_free(src.tok);
    if (src.dump) andrea_dump_close(src.dump);
    andrea_report_data_free(d);
    free(d);
    return rc;
}
