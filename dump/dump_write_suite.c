/* dump_write_suite.c — the HDF5 writer as a sink of the forward loop (batch_sink.h,
 * dump_write_impl.h). suite_begin makes one suite's group and attributes, the targets and
 * entities tables and the per-sequence datasets at full size (chunked so one (sequence, layer,
 * head) map is one chunk); maps writes each piece of maps (one direct chunk write per map, or
 * hyperslabs; padded query rows zeroed on the way when the source did not); batch writes tokens,
 * lengths, norms, DLA and head_out; suite_end closes. The loop (run/forward_loop.c) is the same for
 * the CPU, MPI and the CUDA streaming pipeline, so every path writes the same file content.
 * Failure contract: -1 with err filled; under MPI a failure all ranks agreed on sets
 * par->agreed (only then are the collective closes of andrea_dw_writer_abort safe).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/atomic_file.h"
#include "../common/checked_size.h"
#include "../common/finite.h"
#include "dump.h"
#include "dump_h5.h"
#include "dump_write_impl.h"
#include "../tokenizer/tokenizer.h"

/* What makes the suite's group self-describing (docs/dump-format.md): dimension scales named
 * seq, layer, head, query, key, position (+ d_model for head_out, target/entity/field for the
 * tables) attached to every dataset, and token_text [n_seq, T]: each token's text as fixed-length
 * UTF-8 (NUL-padded; "" past an item's length). Not variable-length strings: MPI-IO cannot write
 * those (HDF5 1.10), and they live in the global heap, whose damage HDF5 1.10 does not survive.
 * ds: tokens, lengths, targets, entities, attention, head_out_norm, head_dla, head_out (-1:
 * absent). Memory: one block of 256 sequences' text at a time. */
static int describe_suite(hid_t g, const probe_suite *s, int L, int H, int C, hsize_t n_pairs, hsize_t n_spans,
                          const hid_t ds[8], const andrea_tokenizer *tok, par_state *par, const char *h5_path,
                          ae_error *err) {
    const int N = s->n_items, T = s->max_len, root = andrea_mpi_rank() == 0;
    enum { SEQ, LAYER, HEAD, QUERY, KEY, POS, DMODEL, TARGET, ENTITY, FIELD, NSCALE };
    static const char *const names[NSCALE] = {"seq",     "layer",  "head",   "query", "key",
                                              "position", "d_model", "target", "entity", "field"};
    const hsize_t sizes[NSCALE] = {(hsize_t)N, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)T,
                                   (hsize_t)T, (hsize_t)C, n_pairs,    n_spans,    3};
    hid_t sc[NSCALE], dtt = -1, st = -1;
    char *text = NULL;
    int rc = -1;
    for (int i = 0; i < NSCALE; i++) sc[i] = -1;
    for (int i = 0; i < NSCALE; i++)
        if (i != DMODEL || ds[7] >= 0) H5_ID(sc[i], andrea_dw_scale_create(g, names[i], sizes[i], par->dxpl, root));

    /* token_text: its width is the longest token text of the suite (every rank computes the same) */
    char raw[ANDREA_TOKEN_MAX_BYTES], clean[3 * ANDREA_TOKEN_MAX_BYTES + 1];
    size_t width = 1;
    for (int i = 0; tok && i < N; i++)
        for (int t = 0; t < s->items[i].n_tokens; t++) {
            int nb = andrea_tokenizer_token_bytes(tok, s->items[i].tokens[t], raw, sizeof raw);
            size_t w = andrea_dw_utf8_clean((const unsigned char *)raw, nb > 0 ? (size_t)nb : 0, clean, sizeof clean);
            if (w > width) width = w;
        }
    if (tok) {
        hsize_t d_tt[2] = {(hsize_t)N, (hsize_t)T};
        H5_ID(st, H5Tcopy(H5T_C_S1));
        H5_TRY(H5Tset_size(st, width));
        H5_TRY(H5Tset_strpad(st, H5T_STR_NULLPAD));
        H5_TRY(H5Tset_cset(st, H5T_CSET_UTF8));
        H5_ID(dtt, andrea_dw_dset_create(g, "token_text", st, 2, d_tt, NULL, 0, 0));
        const int block = 256;
        size_t cap;
        if (ae_mul((size_t)(N < block ? N : block) * (size_t)T, width, &cap) || !(text = malloc(cap ? cap : 1))) {
            andrea_fail(err, "%s: out of memory for the token text of suite %s", h5_path, s->name);
            goto fail;
        }
        for (int b0 = 0; b0 < N; b0 += block) {
            const int nb_seq = N - b0 < block ? N - b0 : block;
            memset(text, 0, (size_t)nb_seq * T * width);
            for (int i = 0; i < nb_seq; i++) {
                const probe_item *it = &s->items[b0 + i];
                for (int t = 0; t < it->n_tokens; t++) {
                    int nb = andrea_tokenizer_token_bytes(tok, it->tokens[t], raw, sizeof raw);
                    size_t w = andrea_dw_utf8_clean((const unsigned char *)raw, nb > 0 ? (size_t)nb : 0, clean, sizeof clean);
                    memcpy(text + ((size_t)i * T + (size_t)t) * width, clean, w);
                }
            }
            hsize_t start[2] = {(hsize_t)b0, 0}, count[2] = {(hsize_t)nb_seq, (hsize_t)T};
            H5_TRY(andrea_dw_dset_write_slab(dtt, par->dxpl, root, st, 2, start, count, text));
        }
    }

    /* every dataset's axes */
    const hid_t by_pos[2] = {sc[SEQ], sc[POS]};
    const char *const n_by_pos[2] = {names[SEQ], names[POS]};
    H5_TRY(andrea_dw_scales_attach(ds[0], 2, by_pos, n_by_pos));
    if (dtt >= 0) H5_TRY(andrea_dw_scales_attach(dtt, 2, by_pos, n_by_pos));
    H5_TRY(andrea_dw_scales_attach(ds[1], 1, &sc[SEQ], &names[SEQ]));
    const hid_t tar[2] = {sc[TARGET], sc[FIELD]}, ent[2] = {sc[ENTITY], sc[FIELD]};
    const char *const n_tar[2] = {names[TARGET], names[FIELD]}, *const n_ent[2] = {names[ENTITY], names[FIELD]};
    H5_TRY(andrea_dw_scales_attach(ds[2], 2, tar, n_tar));
    H5_TRY(andrea_dw_scales_attach(ds[3], 2, ent, n_ent));
    const hid_t att[5] = {sc[SEQ], sc[LAYER], sc[HEAD], sc[QUERY], sc[KEY]};
    const char *const n_att[5] = {names[SEQ], names[LAYER], names[HEAD], names[QUERY], names[KEY]};
    H5_TRY(andrea_dw_scales_attach(ds[4], 5, att, n_att));
    const hid_t val[5] = {sc[SEQ], sc[LAYER], sc[HEAD], sc[POS], sc[DMODEL]};
    const char *const n_val[5] = {names[SEQ], names[LAYER], names[HEAD], names[POS], names[DMODEL]};
    for (int k = 5; k <= 6; k++)
        if (ds[k] >= 0) H5_TRY(andrea_dw_scales_attach(ds[k], 4, val, n_val));
    if (ds[7] >= 0) H5_TRY(andrea_dw_scales_attach(ds[7], 5, val, n_val));
    rc = 0;
fail:
    free(text);
    if (st >= 0) H5Tclose(st);
    char why[200];
    if (dtt >= 0 && H5Dclose(dtt) < 0 && rc == 0)
        rc = andrea_fail(err, "%s: HDF5 cannot close token_text of %s: %s", h5_path, s->name, h5_last_error(why));
    for (int i = 0; i < NSCALE; i++)
        if (sc[i] >= 0 && H5Dclose(sc[i]) < 0 && rc == 0)
            rc = andrea_fail(err, "%s: HDF5 cannot close the %s scale of %s: %s", h5_path, names[i], s->name, h5_last_error(why));
    return rc;
}

/* One dataset of maps or values: chunked (FILE, PART), or virtual over the parts (MASTER). */
static hid_t make_big(const dw_writer *w, hid_t g, const char *suite, const long long *lo, const long long *hi,
                      const char *name, hid_t type, int rank, const hsize_t *dims, const hsize_t *chunk, int gzip,
                      int fill_nan) {
    if (w->mode == DW_MODE_MASTER) return andrea_dw_vds_create(g, suite, name, type, rank, dims, fill_nan, &w->vds, lo, hi);
    return andrea_dw_dset_create(g, name, type, rank, dims, chunk, gzip, fill_nan);
}

/* The datasets of maps and per-head values of one suite, `rows` sequences: attention, and
 * head_out_norm + head_dla (contrib not none), head_out (contrib full or --heads); -1 when
 * absent. Chunked so one (sequence, layer, head) map is one chunk; MASTER: virtual datasets
 * over the parts (dump_write_parts.c), of the same shapes and types. */
static int maps_dsets(const dw_writer *w, hid_t g, int suite, const probe_suite *s, long long rows, hid_t *datt,
                      hid_t *dnorm, hid_t *ddla, hid_t *dout, ae_error *err) {
    const char *h5_path = w->h5_path;
    const andrea_dump_options *o = w->o;
    const andrea_run_options *ro = &o->run;
    const int L = w->m->cfg.n_layer, H = w->m->cfg.n_head, C = w->m->cfg.d_model, T = s->max_len;
    const hsize_t n = (hsize_t)rows;
    hsize_t d_att[5] = {n, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)T}, c_att[5] = {1, 1, 1, (hsize_t)T, (hsize_t)T};
    hsize_t d_val[4] = {n, (hsize_t)L, (hsize_t)H, (hsize_t)T}, c_val[4] = {1, (hsize_t)L, (hsize_t)H, (hsize_t)T};
    hsize_t d_out[5] = {n, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)C}, c_out[5] = {1, 1, 1, (hsize_t)T, (hsize_t)C};
    const hid_t att_type = ro->maps_fp32 ? H5T_IEEE_F32LE : w->f16;
    long long *lo = NULL, *hi = NULL;
    int rc = -1;
    if (w->mode == DW_MODE_MASTER) {
        const int np = w->vds.n_parts;
        lo = malloc(sizeof *lo * (size_t)np);
        hi = malloc(sizeof *hi * (size_t)np);
        if (!lo || !hi) {
            andrea_fail(err, "%s: out of memory", h5_path);
            goto fail;
        }
        for (int r = 0; r < np; r++) andrea_dw_part_range(w->suites, w->n_suites, suite, w->B, r, np, &lo[r], &hi[r]);
    }
    H5_ID(*datt, make_big(w, g, s->name, lo, hi, "attention", att_type, 5, d_att, c_att, o->gzip, 0));
    if (ro->contrib != ANDREA_CONTRIB_NONE) {
        H5_ID(*dnorm, make_big(w, g, s->name, lo, hi, "head_out_norm", H5T_IEEE_F32LE, 4, d_val, c_val, 0, 0));
        H5_ID(*ddla, make_big(w, g, s->name, lo, hi, "head_dla", H5T_IEEE_F32LE, 4, d_val, c_val, 0, 1));
    }
    if (ro->contrib == ANDREA_CONTRIB_FULL || ro->heads != NULL)
        H5_ID(*dout, make_big(w, g, s->name, lo, hi, "head_out", H5T_IEEE_F32LE, 5, d_out, c_out, o->gzip, 0));
    rc = 0;
fail:
    free(lo);
    free(hi);
    return rc;
}

/* MASTER: tokens and lengths of every item, written whole (every rank holds the suites' items;
 * they are what the forward loop writes batch by batch otherwise). */
static int write_items(const dw_writer *w, const probe_suite *s, hid_t dtok, hid_t dlen, ae_error *err) {
    const char *h5_path = w->h5_path;
    const int N = s->n_items, T = s->max_len;
    int *tok = NULL, *len = NULL, rc = -1;
    size_t nt;
    if (ae_mul((size_t)N, (size_t)T, &nt) || !(tok = calloc(nt ? nt : 1, sizeof *tok)) ||
        !(len = malloc(sizeof *len * (size_t)(N ? N : 1)))) {
        andrea_fail(err, "%s: out of memory for the tokens of suite %s", h5_path, s->name);
        goto fail;
    }
    for (int i = 0; i < N; i++) {
        memcpy(tok + (size_t)i * T, s->items[i].tokens, sizeof *tok * (size_t)s->items[i].n_tokens);
        len[i] = s->items[i].n_tokens;
    }
    hsize_t zero[2] = {0, 0}, d_tok[2] = {(hsize_t)N, (hsize_t)T}, d_len[1] = {(hsize_t)N};
    H5_TRY(andrea_dw_dset_write_slab(dtok, H5P_DEFAULT, 1, H5T_NATIVE_INT, 2, zero, d_tok, tok));
    H5_TRY(andrea_dw_dset_write_slab(dlen, H5P_DEFAULT, 1, H5T_NATIVE_INT, 1, zero, d_len, len));
    rc = 0;
fail:
    free(tok);
    free(len);
    return rc;
}

/* PART: the group of suite s and its datasets of maps and values for this rank's rows only
 * (none when it has no row of s: then no group either). */
static int part_suite_begin(dw_writer *w, int suite, const probe_suite *s, ae_error *err) {
    const char *h5_path = w->h5_path;
    long long lo, hi;
    andrea_dw_part_range(w->suites, w->n_suites, suite, w->B, andrea_mpi_rank(), andrea_mpi_size(), &lo, &hi);
    w->row0 = lo;
    if (hi == lo) return 0;
    H5_ID(w->g, H5Gcreate2(w->f, s->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5_TRY(andrea_dw_attr_int(w->g, "first_seq", (int)lo));
    if (maps_dsets(w, w->g, suite, s, hi - lo, &w->datt, &w->dnorm, &w->ddla, &w->dout, err)) goto fail;
    return 0;
fail:
    andrea_dw_writer_abort(w, suite, NULL);
    return -1;
}

static int writer_suite_begin(void *self, int suite, const probe_suite *s, ae_error *err) {
    dw_writer *w = self;
    if (w->mode == DW_MODE_PART) return part_suite_begin(w, suite, s, err);
    const hid_t f = w->f;
    const andrea_model *m = w->m;
    const andrea_dump_options *o = w->o;
    const andrea_run_options *ro = &o->run;
    par_state *par = w->par;
    const char *h5_path = w->h5_path;
    long long *bytes = &w->bytes;
    const int L = m->cfg.n_layer, H = m->cfg.n_head, C = m->cfg.d_model, T = s->max_len, N = s->n_items;
    hid_t g = -1, dtok = -1, dlen = -1, dtar = -1, dent = -1, datt = -1, dnorm = -1, ddla = -1, dout = -1;
    int *rows = NULL;
    int rc = -1;

    H5_ID(g, H5Gcreate2(f, s->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5_TRY(andrea_dw_attr_u64(g, "seed", s->seed));
    H5_TRY(andrea_dw_attr_str(g, "source", s->source));
    H5_TRY(andrea_dw_attr_int(g, "n_seq", N));
    H5_TRY(andrea_dw_attr_int(g, "T", T));

    /* targets [n_pairs, 3] and entities [n_spans, 3]: small, written whole */
    size_t n_pairs = 0, n_spans = 0, nb;
    for (int i = 0; i < N; i++) {
        n_pairs += (size_t)s->items[i].n_targets;
        n_spans += (size_t)s->items[i].n_entities;
    }
    size_t most = n_pairs > n_spans ? n_pairs : n_spans;
    if (ae_mul(most ? most : 1, 3 * sizeof(int), &nb) || !(rows = malloc(nb))) {
        andrea_fail(err, "%s: out of memory for the targets of suite %s", h5_path, s->name);
        goto fail;
    }
    size_t r = 0;
    for (int i = 0; i < N; i++)
        for (int t = 0; t < s->items[i].n_targets; t++, r++) {
            rows[3 * r] = i;
            rows[3 * r + 1] = s->items[i].targets[t].query;
            rows[3 * r + 2] = s->items[i].targets[t].key;
        }
    hsize_t tdims[2] = {n_pairs, 3}, zero2[2] = {0, 0};
    H5_ID(dtar, andrea_dw_dset_create(g, "targets", H5T_STD_I32LE, 2, tdims, NULL, 0, 0));
    const int root = andrea_mpi_rank() == 0; /* MPI: rank 0 writes the small tables */
    if (n_pairs) H5_TRY(andrea_dw_dset_write_slab(dtar, par->dxpl, root, H5T_NATIVE_INT, 2, zero2, tdims, rows));
    r = 0;
    for (int i = 0; i < N; i++)
        for (int e = 0; e < s->items[i].n_entities; e++, r++) {
            rows[3 * r] = i;
            rows[3 * r + 1] = s->items[i].entities[2 * e];
            rows[3 * r + 2] = s->items[i].entities[2 * e + 1];
        }
    hsize_t edims[2] = {n_spans, 3};
    H5_ID(dent, andrea_dw_dset_create(g, "entities", H5T_STD_I32LE, 2, edims, NULL, 0, 0));
    if (n_spans) H5_TRY(andrea_dw_dset_write_slab(dent, par->dxpl, root, H5T_NATIVE_INT, 2, zero2, edims, rows));
    *bytes += (long long)((n_pairs + n_spans) * 3 * sizeof(int));

    /* the per-sequence datasets */
    hsize_t d_tok[2] = {(hsize_t)N, (hsize_t)T}, c_tok[2] = {(hsize_t)(N < 256 ? N : 256), (hsize_t)T};
    hsize_t d_len[1] = {(hsize_t)N};
    H5_ID(dtok, andrea_dw_dset_create(g, "tokens", H5T_STD_I32LE, 2, d_tok, c_tok, 0, 0));
    H5_ID(dlen, andrea_dw_dset_create(g, "lengths", H5T_STD_I32LE, 1, d_len, NULL, 0, 0));
    if (w->mode == DW_MODE_MASTER && write_items(w, s, dtok, dlen, err)) goto fail;
    if (maps_dsets(w, g, suite, s, N, &datt, &dnorm, &ddla, &dout, err)) goto fail;
    if (dout >= 0 && ro->heads && ro->contrib != ANDREA_CONTRIB_FULL) {
        /* which heads were written; the others read back as the fill value 0 */
        char list[4096];
        size_t len = 0;
        list[0] = 0;
        for (int h = 0; h < L * H && len + 16 < sizeof list; h++)
            if (ro->heads[h]) len += (size_t)snprintf(list + len, sizeof list - len, "%s%d.%d", len ? "," : "", h / H, h % H);
        H5_TRY(andrea_dw_attr_str(dout, "heads", list));
    }
    const hid_t ds[8] = {dtok, dlen, dtar, dent, datt, dnorm, ddla, dout};
    if (describe_suite(g, s, L, H, C, (hsize_t)n_pairs, (hsize_t)n_spans, ds, o->tok, par, h5_path, err)) goto fail;

    rc = 0;
fail:
    free(rows);
    w->g = g, w->dtok = dtok, w->dlen = dlen, w->dtar = dtar, w->dent = dent;
    w->datt = datt, w->dnorm = dnorm, w->ddla = ddla, w->dout = dout;
    if (rc) andrea_dw_writer_abort(w, suite, NULL);
    return rc;
}

/* Closes the open suite's datasets and group. err NULL: after a failure, messages dropped. */
static int writer_close_suite(dw_writer *w, const char *suite_name, ae_error *err) {
    int rc = 0;
    char why[200];
    hid_t *ids[] = {&w->dtok, &w->dlen, &w->dtar, &w->dent, &w->datt, &w->dnorm, &w->ddla, &w->dout};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        if (*ids[i] >= 0 && H5Dclose(*ids[i]) < 0 && rc == 0)
            rc = err ? andrea_fail(err, "%s: HDF5 cannot close a dataset of %s: %s", w->h5_path, suite_name,
                                   h5_last_error(why))
                     : -1;
        *ids[i] = -1;
    }
    if (w->g >= 0 && H5Gclose(w->g) < 0 && rc == 0)
        rc = err ? andrea_fail(err, "%s: HDF5 cannot close group %s: %s", w->h5_path, suite_name, h5_last_error(why)) : -1;
    w->g = -1;
    return rc;
}

int andrea_dw_writer_abort(dw_writer *w, int suite, ae_error *err) {
    (void)err;
    if (w->par->collective && !w->par->agreed) return -1; /* see the header: no collective close */
    return writer_close_suite(w, suite >= 0 ? w->suites[suite].name : "", NULL);
}

static int writer_suite_end(void *self, int suite, ae_error *err) {
    dw_writer *w = self;
    return writer_close_suite(w, w->suites[suite].name, err);
}

/* A piece of maps: one H5Dwrite_chunk per map where allowed (andrea_dw_maps_direct_ok), else hyperslab
 * writes; MPI steps with nothing to write still take part in the collective write. */
static int writer_maps(void *self, const andrea_batch *b, size_t first, size_t n, const void *piece, ae_error *err) {
    dw_writer *w = self;
    const char *h5_path = w->h5_path;
    const andrea_dump_options *o = w->o;
    const andrea_run_options *ro = &o->run;
    const int L = b->L, H = b->H, T = b->T;
    const size_t esz = ro->maps_fp32 ? 4 : 2;
    const hid_t mtype = ro->maps_fp32 ? H5T_NATIVE_FLOAT : w->f16;
    const int direct = andrea_dw_maps_direct_ok(w->par), b0 = b->b0 - (int)w->row0; /* row in this file */
    if (w->mode == DW_MODE_PART && (b->nb == 0 || w->datt < 0)) return 0; /* PART: nothing collective */
    if (b->maps_padding_zeroed && !direct) {
        hsize_t s5[5] = {(hsize_t)b0, 0, 0, 0, 0}, n5[5] = {(hsize_t)b->nb, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)T};
        H5_TRY(andrea_dw_dset_write_slab(w->datt, w->par->dxpl, b->nb > 0, mtype, 5, s5, n5, piece));
    } else {
        H5_TRY(andrea_dw_write_maps(w->datt, w->par->dxpl, mtype, direct, b0, first, n, L, H, T, esz, piece,
                             b->maps_padding_zeroed ? NULL : b->lengths, w->stage, o->gzip));
    }
    w->bytes += (long long)(n * (size_t)T * T * esz);
    return 0;
fail:
    return -1;
}

/* Tokens, lengths, per-head values and head_out of a batch. */
static int writer_batch(void *self, const andrea_batch *b, ae_error *err) {
    dw_writer *w = self;
    const char *h5_path = w->h5_path;
    const andrea_dump_options *o = w->o;
    const andrea_run_options *ro = &o->run;
    const int L = b->L, H = b->H, T = b->T, C = b->C, nb = b->nb, b0 = b->b0 - (int)w->row0, active = nb > 0;
    const hid_t dxpl = w->par->dxpl;
    if (w->mode == DW_MODE_PART) {
        if (!active || w->g < 0) return 0; /* nothing collective; tokens and lengths: the master's */
    } else {
        hsize_t s_tok[2] = {(hsize_t)b0, 0}, n_tok[2] = {(hsize_t)nb, (hsize_t)T};
        hsize_t s_len[1] = {(hsize_t)b0}, n_len[1] = {(hsize_t)nb};
        H5_TRY(andrea_dw_dset_write_slab(w->dtok, dxpl, active, H5T_NATIVE_INT, 2, s_tok, n_tok, b->tokens));
        H5_TRY(andrea_dw_dset_write_slab(w->dlen, dxpl, active, H5T_NATIVE_INT, 1, s_len, n_len, b->lengths));
        w->bytes += (long long)((size_t)nb * (T + 1) * sizeof(int));
    }
    if (w->dnorm >= 0) {
        hsize_t s4[4] = {(hsize_t)b0, 0, 0, 0}, n4[4] = {(hsize_t)nb, (hsize_t)L, (hsize_t)H, (hsize_t)T};
        H5_TRY(andrea_dw_dset_write_slab(w->dnorm, dxpl, active, H5T_NATIVE_FLOAT, 4, s4, n4, b->head_out_norm));
        H5_TRY(andrea_dw_dset_write_slab(w->ddla, dxpl, active, H5T_NATIVE_FLOAT, 4, s4, n4, b->head_dla));
        w->bytes += (long long)(2 * (size_t)nb * L * H * T * sizeof(float));
    }
    if (w->dout < 0 || !b->head_out) return 0;
    if (ro->contrib == ANDREA_CONTRIB_FULL) {
        hsize_t s5[5] = {(hsize_t)b0, 0, 0, 0, 0}, n_out[5] = {(hsize_t)nb, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)C};
        H5_TRY(andrea_dw_dset_write_slab(w->dout, dxpl, active, H5T_NATIVE_FLOAT, 5, s5, n_out, b->head_out));
        w->bytes += (long long)((size_t)nb * L * H * T * C * sizeof(float));
        return 0;
    }
    /* only the chosen heads' chunks exist in the file (MPI: every rank makes the calls of a full
     * batch, those past its sequences selecting nothing) */
    hsize_t c_out[5] = {1, 1, 1, (hsize_t)T, (hsize_t)C};
    const int B = w->B, nb_calls = w->par->collective ? B : nb;
    for (int i = 0; i < nb_calls; i++)
        for (int lh = 0; lh < L * H; lh++) {
            if (!ro->heads[lh]) continue;
            hsize_t st[5] = {(hsize_t)(b0 + i), (hsize_t)(lh / H), (hsize_t)(lh % H), 0, 0};
            H5_TRY(andrea_dw_dset_write_slab(w->dout, dxpl, i < nb, H5T_NATIVE_FLOAT, 5, st, c_out,
                                      b->head_out + ((size_t)i * L * H + (size_t)lh) * T * C));
            if (i < nb) w->bytes += (long long)((size_t)T * C * sizeof(float));
        }
    return 0;
fail:
    return -1;
}

void andrea_dw_writer_init(dw_writer *w) {
    memset(w, 0, sizeof *w);
    w->f = w->f16 = -1;
    w->g = w->dtok = w->dlen = w->dtar = w->dent = w->datt = w->dnorm = w->ddla = w->dout = -1;
}

static int writer_abort(void *self, int suite, ae_error *err) { return andrea_dw_writer_abort(self, suite, err); }

andrea_batch_sink andrea_dw_writer_sink(dw_writer *w) {
    andrea_batch_sink k = {.self = w, .suite_begin = writer_suite_begin, .maps = writer_maps, .batch = writer_batch,
                           .suite_end = writer_suite_end, .abort = writer_abort, .is_writer = 1};
    return k;
}
