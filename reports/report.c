/* report.c — andrea_render: gathers a report_data from a dump, a catalog and the model's
 * tokenizer, then hands it to andrea_report_write (see report.h, report_data.h).
 *
 * The catalog's cells come as plain rows (catalog/catalog_report.h: the current run's per class,
 * the dump's own run winning for the classes it scored, the training run's steps); the report
 * plots each labelled head's score against step when the checkpoint's run has two or more.
 * Token text comes from the tokenizer beside the checkpoint; when it cannot be opened (the
 * checkpoint moved), tokens are shown as "#id" and the index says why.
 */
#include "report.h"

#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/checked_size.h"
#include "../catalog/catalog_report.h"
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

int andrea_report_load_catalog(report_data *d, const char *db_path, const char *seal, catalog_report_cache *cache,
                               ae_error *err) {
    /* the dump's suites first, in dump order */
    const char **first = malloc(sizeof *first * (size_t)(d->n_suites > 0 ? d->n_suites : 1));
    if (!first) return andrea_fail(err, "%s: out of memory reading the catalog", db_path);
    for (int s = 0; s < d->n_suites; s++) first[s] = d->suites[s].name;
    catalog_report_rows r = {.cache = cache, .sha256 = d->sha256, .seal = seal, .n_layer = d->n_layer, .n_head = d->n_head,
                             .first = first, .n_first = d->n_suites};
    const int rc = andrea_catalog_report_rows(&r, db_path, err);
    free(first);
    if (rc) {
        andrea_catalog_report_rows_free(&r);
        return -1;
    }
    d->n_classes = r.n_classes;
    d->classes = r.classes;
    d->scores = r.scores;
    d->class_runs = r.class_runs;
    if (r.model[0]) snprintf(d->model, sizeof d->model, "%s", r.model);
    snprintf(d->run_name, sizeof d->run_name, "%s", r.run_name);
    d->n_steps = r.n_steps;
    d->steps = r.steps;
    d->step_scores = r.step_scores;
    return 0;
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
    d->from_dump = 1;
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
    if (andrea_report_load_catalog(d, db_path, andrea_dump_seal_hex(src.dump), opt ? opt->catalog_cache : NULL, err))
        goto done;
    rc = andrea_report_write(d, out_dir, opt, err);
done:
    if (src.tok) andrea_tokenizer_free(src.tok);
    if (src.dump) andrea_dump_close(src.dump);
    andrea_report_data_free(d);
    free(d);
    return rc;
}
