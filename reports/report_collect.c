/* report_collect.c — the maps a report shows, kept from the forward (report_collect.h). */
#include "report_collect.h"
#include "out_folder.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/checked_size.h"
#include "../common/half.h"
#include "../common/mpi_shard.h"
#include "../tokenizer/tokenizer.h"
#include "report_data.h"

struct report_collector {
    /* copied from the model, not pointed to: a series renders after each model was freed */
    andrea_config cfg;
    char path[4096], dir[4096];
    int examples, n_suites, NH;
    report_suite *suites;   /* [n_suites]: name, T, n_seq, examples' tokens and targets */
    float **maps;           /* [n_suites] -> [n_examples, NH, T, T], or NULL: */
    uint16_t **tri;         /* [n_suites] -> [n_examples, NH, T(T+1)/2]: the maps' lower triangles
                             * as fp16, kept instead where every value of the suite is one (an fp16
                             * run's maps: a quarter of the memory, which a series holds for every
                             * checkpoint until it renders) */
    andrea_tokenizer *tok;
};

/* Lower-triangle values in a T x T map. */
static size_t tri_size(size_t T) { return T * (T + 1) / 2; }

/* Map m (of NH * n_examples) of suite s as floats into out [T, T]. */
static void map_floats(const report_collector *rc, int s, size_t m, float *out) {
    const size_t T = (size_t)rc->suites[s].T;
    if (rc->maps[s]) {
        memcpy(out, rc->maps[s] + m * T * T, T * T * sizeof(float));
        return;
    }
    const uint16_t *tri = rc->tri[s] + m * tri_size(T);
    for (size_t q = 0; q < T; q++) {
        andrea_f16_to_f32_n(out + q * T, tri + q * (q + 1) / 2, q + 1);
        memset(out + q * T + q + 1, 0, (T - q - 1) * sizeof(float));
    }
}

/* Suite si's maps as fp16 lower triangles when that keeps every bit (zeros above the diagonal,
 * each value an fp16 one); else, or without the memory, as they are. */
static void compact(report_collector *rc, int si) {
    const size_t T = (size_t)rc->suites[si].T, n_maps = (size_t)rc->suites[si].n_examples * (size_t)rc->NH;
    size_t bytes;
    if (!rc->maps[si] || ae_mul(n_maps ? n_maps : 1, tri_size(T) * sizeof(uint16_t), &bytes)) return;
    uint16_t *tri = malloc(bytes);
    float *back = malloc(T * sizeof *back);
    int exact = tri && back;
    for (size_t m = 0; m < n_maps && exact; m++)
        for (size_t q = 0; q < T && exact; q++) {
            const float *row = rc->maps[si] + (m * T + q) * T;
            uint16_t *h = tri + m * tri_size(T) + q * (q + 1) / 2;
            andrea_f32_to_f16_n(h, row, q + 1);
            andrea_f16_to_f32_n(back, h, q + 1);
            exact = !memcmp(back, row, (q + 1) * sizeof(float));
            for (size_t k = q + 1; k < T && exact; k++) exact = row[k] == 0.0f && !signbit(row[k]);
        }
    free(back);
    if (!exact) {
        free(tri);
        return;
    }
    free(rc->maps[si]);
    rc->maps[si] = NULL;
    rc->tri[si] = tri;
}

static int suite_begin(void *self, int si, const probe_suite *s, ae_error *err) {
    report_collector *rc = self;
    report_suite *out = &rc->suites[si];
    snprintf(out->name, sizeof out->name, "%s", s->name);
    out->T = s->max_len;
    out->n_seq = s->n_items;
    out->n_examples = s->n_items < rc->examples ? s->n_items : rc->examples;
    const int T = out->T, ne = out->n_examples;
    size_t nt, ntt, nm;
    if (T < 1 || ae_mul((size_t)ne, (size_t)T, &nt) || ae_mul(nt, (size_t)T, &ntt) || ae_mul(ntt, (size_t)rc->NH, &nm))
        return andrea_fail(err, "report: suite %s: bad map size T = %d", s->name, T);
    out->n_tokens = calloc((size_t)(ne ? ne : 1), sizeof *out->n_tokens);
    out->tokens = calloc(nt ? nt : 1, sizeof *out->tokens);
    out->target = calloc(ntt ? ntt : 1, 1);
    rc->maps[si] = calloc(nm ? nm : 1, sizeof(float)); /* zeros: a report of another rank's item stays blank */
    if (!out->n_tokens || !out->tokens || !out->target || !rc->maps[si])
        return andrea_fail(err, "report: out of memory for the example maps of %s", s->name);
    for (int e = 0; e < ne; e++) {
        const probe_item *it = &s->items[e];
        out->n_tokens[e] = it->n_tokens;
        memcpy(out->tokens + (size_t)e * T, it->tokens, (size_t)it->n_tokens * sizeof(int));
        for (int j = 0; j < it->n_targets; j++) {
            int q = it->targets[j].query, k = it->targets[j].key;
            if (q < 0 || k < 0 || q >= it->n_tokens || k >= it->n_tokens) continue;
            out->target[((size_t)e * T + (size_t)q) * T + (size_t)k] = 1;
        }
    }
    return 0;
}

/* Keeps the maps of the examples, padded query rows zeroed (as a dump stores them). */
static int maps(void *self, const andrea_batch *b, size_t first, size_t n, const void *piece, ae_error *err) {
    report_collector *rc = self;
    (void)err;
    const report_suite *su = &rc->suites[b->suite];
    const size_t NH = (size_t)rc->NH, T = (size_t)b->T, tt = T * T;
    for (size_t i = 0; i < n; i++) {
        const size_t m = first + i;
        const int seq = b->b0 + (int)(m / NH);
        if (seq >= su->n_examples) continue;
        const size_t len = (size_t)b->lengths[m / NH];
        float *dst = rc->maps[b->suite] + ((size_t)seq * NH + m % NH) * tt;
        if (b->maps_fp16) {
            const uint16_t *src = (const uint16_t *)piece + i * tt;
            andrea_f16_to_f32_n(dst, src, len * T);
        } else {
            memcpy(dst, (const float *)piece + i * tt, len * T * sizeof(float));
        }
        memset(dst + len * T, 0, (tt - len * T) * sizeof(float));
    }
    return 0;
}

/* Only the examples' maps are read: on a GPU no other map comes to the host (batch_sink.h). */
static int wants_host_maps(void *self, const andrea_batch *b, int seq) {
    const report_collector *rc = self;
    return seq < rc->suites[b->suite].n_examples;
}

/* Suite si's float maps, bit for bit, those of suite t kept compact (the same shape). */
static int same_as_compact(const report_collector *rc, int t, int si) {
    const size_t T = (size_t)rc->suites[si].T, n_maps = (size_t)rc->suites[si].n_examples * (size_t)rc->NH;
    float *map = malloc(T * T * sizeof *map);
    int same = map != NULL;
    for (size_t m = 0; m < n_maps && same; m++) {
        map_floats(rc, t, m, map);
        same = !memcmp(map, rc->maps[si] + m * T * T, T * T * sizeof(float));
    }
    free(map);
    return same;
}

/* An earlier suite whose shown examples are si's, token for token, with the same maps, bit for
 * bit (twin suites: run.c hands them one forward), or -1. Equal bits, not equal tokens alone,
 * decide: the report then keeps one copy and says both suites show it. */
static int earlier_twin(const report_collector *rc, int si, size_t n) {
    const report_suite *su = &rc->suites[si];
    for (int t = 0; t < si; t++) {
        const report_suite *o = &rc->suites[t];
        if (o->maps_of || (!rc->maps[t] && !rc->tri[t]) || o->n_examples != su->n_examples || o->T != su->T ||
            memcmp(o->n_tokens, su->n_tokens, sizeof(int) * (size_t)su->n_examples) ||
            memcmp(o->tokens, su->tokens, sizeof(int) * (size_t)su->n_examples * (size_t)su->T))
            continue;
        if (rc->maps[t] ? !memcmp(rc->maps[t], rc->maps[si], n * sizeof(float)) : same_as_compact(rc, t, si)) return t;
    }
    return -1;
}

/* MPI: each example map was kept by the one rank whose batch held it (zeros on the others), so
 * their sum on rank 0, which renders, is every example map exactly (x + 0 = x). Serial: no-op.
 * Then a twin's maps go: it reads its leader's. */
static int suite_end(void *self, int si, ae_error *err) {
    report_collector *rc = self;
    report_suite *su = &rc->suites[si];
    const size_t n = (size_t)su->n_examples * (size_t)rc->NH * (size_t)su->T * (size_t)su->T;
    if (andrea_mpi_sum_f32_to(rc->maps[si], n, 0, err)) return -1;
    const int t = earlier_twin(rc, si, n);
    if (t >= 0) {
        free(rc->maps[si]);
        rc->maps[si] = NULL;
        su->maps_of = t + 1;
    } else {
        compact(rc, si);
    }
    return 0;
}

report_collector *andrea_report_collector_open(const andrea_model *m, int n_suites, int examples, ae_error *err) {
    report_collector *rc = calloc(1, sizeof *rc);
    if (!rc) {
        andrea_fail(err, "report: out of memory");
        return NULL;
    }
    rc->cfg = m->cfg;
    snprintf(rc->path, sizeof rc->path, "%s", m->path);
    snprintf(rc->dir, sizeof rc->dir, "%s", m->dir);
    rc->n_suites = n_suites;
    rc->examples = examples > 0 ? examples : andrea_report_default_examples();
    rc->NH = m->cfg.n_layer * m->cfg.n_head;
    rc->suites = calloc((size_t)(n_suites > 0 ? n_suites : 1), sizeof *rc->suites);
    rc->maps = calloc((size_t)(n_suites > 0 ? n_suites : 1), sizeof *rc->maps);
    rc->tri = calloc((size_t)(n_suites > 0 ? n_suites : 1), sizeof *rc->tri);
    if (!rc->suites || !rc->maps || !rc->tri) {
        andrea_report_collector_free(rc);
        andrea_fail(err, "report: out of memory");
        return NULL;
    }
    return rc;
}

andrea_batch_sink andrea_report_collector_sink(report_collector *rc) {
    andrea_batch_sink k = {.self = rc, .suite_begin = suite_begin, .maps = maps, .suite_end = suite_end,
                           .wants_host_maps = wants_host_maps};
    return k;
}

static int tok_bytes(const report_data *d, int id, char *buf, size_t cap) {
    const report_collector *rc = d->ctx;
    if (!rc->tok || id < 0) return -1;
    return andrea_tokenizer_token_bytes(rc->tok, id, buf, cap);
}

static int read_map(const report_data *d, int s, int e, int l, int h, float *out, ae_error *err) {
    const report_collector *rc = d->ctx;
    if (s < 0 || s >= rc->n_suites) return andrea_fail(err, "report: no suite %d", s);
    const report_suite *su = &rc->suites[s];
    if (e < 0 || e >= su->n_examples)
        return andrea_fail(err, "report: map of suite %d example %d was not kept", s, e);
    if (su->maps_of) s = su->maps_of - 1; /* a twin: its leader's maps, the same values */
    map_floats(rc, s, (size_t)e * rc->NH + (size_t)l * d->n_head + (size_t)h, out);
    return 0;
}

int andrea_render_collected(report_collector *rc, const char *sha256, const char *dump_path, const char *maps_dtype,
                            const char *db_path, const char *out_dir, const andrea_render_options *opt, ae_error *err) {
    if (andrea_out_folder_check(out_dir, OUT_FOLDER_REPORT, err)) return -1;
    report_data *d = calloc(1, sizeof *d);
    if (!d) return andrea_fail(err, "%s: out of memory", out_dir);
    d->n_layer = rc->cfg.n_layer;
    d->n_head = rc->cfg.n_head;
    d->d_model = rc->cfg.d_model;
    d->vocab_size = rc->cfg.vocab_size;
    snprintf(d->ckpt_path, sizeof d->ckpt_path, "%s", rc->path);
    snprintf(d->sha256, sizeof d->sha256, "%s", sha256);
    snprintf(d->maps_dtype, sizeof d->maps_dtype, "%s", maps_dtype);
    snprintf(d->dump_path, sizeof d->dump_path, "%s", dump_path ? dump_path : "none (scored in the forward)");
    d->from_dump = 0; /* a kept dump has the same values: the maps come from the collector */
    snprintf(d->db_path, sizeof d->db_path, "%s", db_path);
    const char *base = strrchr(d->ckpt_path, '/');
    snprintf(d->model, sizeof d->model, "%.255s", base && base[1] ? base + 1 : d->ckpt_path);
    ae_error terr = {{0}};
    if (!rc->tok) rc->tok = andrea_tokenizer_open(d->vocab_size, rc->dir[0] ? rc->dir : ".", NULL, &terr);
    if (!rc->tok) snprintf(d->note, sizeof d->note, "Token text unavailable (%.400s); tokens are shown as #id.", terr.msg);
    d->bos = rc->tok ? andrea_tokenizer_bos(rc->tok) : -1;
    d->token_bytes = tok_bytes;
    d->read_map = read_map;
    d->ctx = rc;
    /* the suites are lent, not owned: andrea_report_data_free must not free them */
    d->suites = rc->suites;
    d->n_suites = rc->n_suites;
    /* no dump: the current runs, this one among them */
    int ret = andrea_report_load_catalog(d, db_path, NULL, opt ? opt->catalog_cache : NULL, err) ? -1
                                                                                               : andrea_report_write(d, out_dir, opt, err);
    d->suites = NULL;
    d->n_suites = 0;
    andrea_report_data_free(d);
    free(d);
    return ret;
}

void andrea_report_collector_free(report_collector *rc) {
    if (!rc) return;
    for (int s = 0; s < rc->n_suites; s++) {
        if (rc->suites) {
            free(rc->suites[s].n_tokens);
            free(rc->suites[s].tokens);
            free(rc->suites[s].target);
        }
        if (rc->maps) free(rc->maps[s]);
        if (rc->tri) free(rc->tri[s]);
    }
    free(rc->suites);
    free(rc->maps);
    free(rc->tri);
    if (rc->tok) andrea_tokenizer_free(rc->tok);
    free(rc);
}
