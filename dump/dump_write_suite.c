/* dump_write_suite.c — one probe suite into the dump (dump_write_impl.h): its group and
 * attributes, the targets and entities tables, the per-sequence datasets at full size (chunked so
 * one (sequence, layer, head) map is one chunk), then the batches: on the CPU (and under MPI,
 * sharded over the ranks with collective writes) forward, zero the padded rows, convert maps to
 * fp16 when asked, write; on a GPU through the CUDA streaming pipeline. Both paths write the same
 * file content. Failure contract: -1 with err filled; under MPI a failure all ranks agreed on sets
 * par->agreed (dump_write.c then closes collectively).
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

/* The values a batch is about to write, after the padded positions were set: every norm, and
 * every DLA with a next token (t < length - 1), must be finite. The CPU engine refuses a forward
 * that overflows float32 itself; on a GPU this is where it shows: a NaN or Inf in any head's map
 * or output, or in the residual stream it feeds, reaches the norms of that head or of every later
 * layer's heads, or the final LayerNorm of the DLA. (A --contrib none dump has neither, and its
 * GPU maps are not scanned: that would cost a pass over every map byte.) */
static int check_values_finite(const float *norm, const float *dla, const int *lengths, int nb, int L, int H, int T,
                               const char *model_path, ae_error *err) {
    const size_t lh = (size_t)L * H;
    for (int b = 0; b < nb; b++)
        for (size_t k = 0; k < lh; k++) {
            const size_t row = ((size_t)b * lh + k) * (size_t)T;
            const size_t with_next = lengths[b] > 1 ? (size_t)lengths[b] - 1 : 0;
            if (ae_any_nonfinite(norm + row, (size_t)T) || ae_any_nonfinite(dla + row, with_next))
                return ae_fail(err, "%s: the forward overflows float32 (non-finite output of layer %zu, head %zu): the "
                                    "checkpoint's weights are far outside a trained model's range",
                               model_path, k / (size_t)H, k % (size_t)H);
        }
    return 0;
}

#ifdef ANDREA_HAVE_CUDA
/* One suite through the CUDA streaming pipeline (kernels/cuda_engine.h): batch k+1 computes and
 * batch k copies to pinned memory while batch k-1 is written here. Same file content as the
 * synchronous path: padded rows are zeroed (in our staging buffers, never in the pipeline's). */
static int write_suite_stream(const char *model_path, const probe_suite *s, int B, int L, int H, int T,
                              const andrea_dump_options *o,
                              hid_t f16, batch_bufs *bb, hid_t dxpl, hid_t dtok, hid_t dlen, hid_t datt, hid_t dnorm,
                              hid_t ddla, ae_progress *prog, long long *bytes, const char *h5_path, ae_error *err) {
    const int N = s->n_items, want_values = dnorm >= 0;
    const size_t map = (size_t)T * T, lh = (size_t)L * H;
    const long long n_batches = (N + B - 1) / B;
    for (long long bi = 0; bi <= n_batches; bi++) {
        andrea_cuda_ready rd;
        if (bi < n_batches) {
            if (ae_interrupted) return ae_fail(err, "%s: interrupted", o->out_path);
            const int b0 = (int)(bi * B), nb = N - b0 < B ? N - b0 : B;
            for (int b = 0; b < nb; b++) {
                const probe_item *it = &s->items[b0 + b];
                memset(bb->tokens + (size_t)b * T, 0, sizeof(int) * (size_t)T);
                memcpy(bb->tokens + (size_t)b * T, it->tokens, sizeof(int) * (size_t)it->n_tokens);
                bb->lengths[b] = it->n_tokens;
            }
            hsize_t s_tok[2] = {(hsize_t)b0, 0}, n_tok[2] = {(hsize_t)nb, (hsize_t)T};
            hsize_t s_len[1] = {(hsize_t)b0}, n_len[1] = {(hsize_t)nb};
            double t0 = ae_now_seconds();
            H5_TRY(dw_dset_write_slab(dtok, dxpl, 1, H5T_NATIVE_INT, 2, s_tok, n_tok, bb->tokens));
            H5_TRY(dw_dset_write_slab(dlen, dxpl, 1, H5T_NATIVE_INT, 1, s_len, n_len, bb->lengths));
            bb->t_other += ae_now_seconds() - t0;
            *bytes += (long long)((size_t)nb * (T + 1) * sizeof(int));
            andrea_forward_io io = {0};
            io.B = nb;
            io.T = T;
            io.tokens = bb->tokens; /* copied by submit before it returns */
            io.lengths = bb->lengths;
            t0 = ae_now_seconds();
            if (andrea_cuda_pipeline_submit(bb->pipe, &io, b0, &rd, err)) return -1;
            bb->t_forward += ae_now_seconds() - t0;
        } else {
            double t0 = ae_now_seconds();
            if (andrea_cuda_pipeline_flush(bb->pipe, &rd, err)) return -1;
            bb->t_forward += ae_now_seconds() - t0;
        }
        if (!rd.valid) continue;
        const int b0 = (int)rd.tag, nb = rd.B;
        const size_t n_maps = (size_t)nb * lh * map, esz = o->maps_fp32 ? 4 : 2;
        double t0 = ae_now_seconds();
        int *len = bb->lengths; /* free again: the next batch's tokens were copied by submit */
        for (int b = 0; b < nb; b++) len[b] = s->items[b0 + b].n_tokens;
        /* the maps piece by piece from the pipeline's pinned ring; padded rows zeroed on the way */
        for (size_t first = 0, n = 0; first < (size_t)nb * lh; first += n) {
            const void *piece;
            if (andrea_cuda_pipeline_maps(bb->pipe, first, &piece, &n, err)) return -1;
            H5_TRY(dw_write_maps(datt, dxpl, o->maps_fp32 ? H5T_NATIVE_FLOAT : f16, dw_maps_direct_ok(o), b0, first, n,
                                 L, H, T, esz, piece, len, bb->attn, o->gzip));
        }
        *bytes += (long long)(n_maps * esz);
        double t1 = ae_now_seconds();
        bb->t_maps += t1 - t0;
        if (want_values) {
            const size_t nv = (size_t)nb * lh * T;
            memcpy(bb->norm, rd.head_out_norm, nv * sizeof(float));
            memcpy(bb->dla, rd.head_dla, nv * sizeof(float));
            for (int b = 0; b < nb; b++) {
                const int len = s->items[b0 + b].n_tokens;
                for (size_t k = 0; k < lh; k++)
                    for (int t = len - 1; t < T; t++) {
                        if (t >= len) bb->norm[((size_t)b * lh + k) * T + t] = 0.0f;
                        bb->dla[((size_t)b * lh + k) * T + t] = NAN; /* no next token */
                    }
            }
            if (check_values_finite(bb->norm, bb->dla, bb->lengths, nb, L, H, T, model_path, err)) return -1;
            hsize_t s4[4] = {(hsize_t)b0, 0, 0, 0}, n4[4] = {(hsize_t)nb, (hsize_t)L, (hsize_t)H, (hsize_t)T};
            H5_TRY(dw_dset_write_slab(dnorm, dxpl, 1, H5T_NATIVE_FLOAT, 4, s4, n4, bb->norm));
            H5_TRY(dw_dset_write_slab(ddla, dxpl, 1, H5T_NATIVE_FLOAT, 4, s4, n4, bb->dla));
            *bytes += (long long)(2 * nv * sizeof(float));
        }
        bb->t_other += ae_now_seconds() - t1;
        ae_progress_add(prog, (uint64_t)nb);
    }
    return 0;
fail:
    return -1;
}
#endif

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
        if (i != DMODEL || ds[7] >= 0) H5_ID(sc[i], dw_scale_create(g, names[i], sizes[i], par->dxpl, root));

    /* token_text: its width is the longest token text of the suite (every rank computes the same) */
    char raw[ANDREA_TOKEN_MAX_BYTES], clean[3 * ANDREA_TOKEN_MAX_BYTES + 1];
    size_t width = 1;
    for (int i = 0; tok && i < N; i++)
        for (int t = 0; t < s->items[i].n_tokens; t++) {
            int nb = andrea_tokenizer_token_bytes(tok, s->items[i].tokens[t], raw, sizeof raw);
            size_t w = dw_utf8_clean((const unsigned char *)raw, nb > 0 ? (size_t)nb : 0, clean, sizeof clean);
            if (w > width) width = w;
        }
    if (tok) {
        hsize_t d_tt[2] = {(hsize_t)N, (hsize_t)T};
        H5_ID(st, H5Tcopy(H5T_C_S1));
        H5_TRY(H5Tset_size(st, width));
        H5_TRY(H5Tset_strpad(st, H5T_STR_NULLPAD));
        H5_TRY(H5Tset_cset(st, H5T_CSET_UTF8));
        H5_ID(dtt, dw_dset_create(g, "token_text", st, 2, d_tt, NULL, 0, 0));
        const int block = 256;
        size_t cap;
        if (ae_mul((size_t)(N < block ? N : block) * (size_t)T, width, &cap) || !(text = malloc(cap ? cap : 1))) {
            ae_fail(err, "%s: out of memory for the token text of suite %s", h5_path, s->name);
            goto fail;
        }
        for (int b0 = 0; b0 < N; b0 += block) {
            const int nb_seq = N - b0 < block ? N - b0 : block;
            memset(text, 0, (size_t)nb_seq * T * width);
            for (int i = 0; i < nb_seq; i++) {
                const probe_item *it = &s->items[b0 + i];
                for (int t = 0; t < it->n_tokens; t++) {
                    int nb = andrea_tokenizer_token_bytes(tok, it->tokens[t], raw, sizeof raw);
                    size_t w = dw_utf8_clean((const unsigned char *)raw, nb > 0 ? (size_t)nb : 0, clean, sizeof clean);
                    memcpy(text + ((size_t)i * T + (size_t)t) * width, clean, w);
                }
            }
            hsize_t start[2] = {(hsize_t)b0, 0}, count[2] = {(hsize_t)nb_seq, (hsize_t)T};
            H5_TRY(dw_dset_write_slab(dtt, par->dxpl, root, st, 2, start, count, text));
        }
    }

    /* every dataset's axes */
    const hid_t by_pos[2] = {sc[SEQ], sc[POS]};
    const char *const n_by_pos[2] = {names[SEQ], names[POS]};
    H5_TRY(dw_scales_attach(ds[0], 2, by_pos, n_by_pos));
    if (dtt >= 0) H5_TRY(dw_scales_attach(dtt, 2, by_pos, n_by_pos));
    H5_TRY(dw_scales_attach(ds[1], 1, &sc[SEQ], &names[SEQ]));
    const hid_t tar[2] = {sc[TARGET], sc[FIELD]}, ent[2] = {sc[ENTITY], sc[FIELD]};
    const char *const n_tar[2] = {names[TARGET], names[FIELD]}, *const n_ent[2] = {names[ENTITY], names[FIELD]};
    H5_TRY(dw_scales_attach(ds[2], 2, tar, n_tar));
    H5_TRY(dw_scales_attach(ds[3], 2, ent, n_ent));
    const hid_t att[5] = {sc[SEQ], sc[LAYER], sc[HEAD], sc[QUERY], sc[KEY]};
    const char *const n_att[5] = {names[SEQ], names[LAYER], names[HEAD], names[QUERY], names[KEY]};
    H5_TRY(dw_scales_attach(ds[4], 5, att, n_att));
    const hid_t val[5] = {sc[SEQ], sc[LAYER], sc[HEAD], sc[POS], sc[DMODEL]};
    const char *const n_val[5] = {names[SEQ], names[LAYER], names[HEAD], names[POS], names[DMODEL]};
    for (int k = 5; k <= 6; k++)
        if (ds[k] >= 0) H5_TRY(dw_scales_attach(ds[k], 4, val, n_val));
    if (ds[7] >= 0) H5_TRY(dw_scales_attach(ds[7], 5, val, n_val));
    rc = 0;
fail:
    free(text);
    if (st >= 0) H5Tclose(st);
    if (dtt >= 0 && H5Dclose(dtt) < 0 && rc == 0) rc = ae_fail(err, "%s: HDF5 cannot close token_text of %s", h5_path, s->name);
    for (int i = 0; i < NSCALE; i++)
        if (sc[i] >= 0 && H5Dclose(sc[i]) < 0 && rc == 0)
            rc = ae_fail(err, "%s: HDF5 cannot close the %s scale of %s", h5_path, names[i], s->name);
    return rc;
}

int dw_write_suite(hid_t f, andrea_engine *eng, const andrea_model *m, const probe_suite *s, int B,
                       const andrea_dump_options *o, hid_t f16, batch_bufs *bb, ae_progress *prog,
                       long long *bytes, par_state *par, long long batch_off, long long n_batches_all,
                       const char *h5_path, ae_error *err) {
    const int L = m->cfg.n_layer, H = m->cfg.n_head, C = m->cfg.d_model, T = s->max_len, N = s->n_items;
    const int want_head_out = o->contrib == ANDREA_CONTRIB_FULL || o->heads != NULL;
    const int want_values = o->contrib != ANDREA_CONTRIB_NONE;
    hid_t g = -1, dtok = -1, dlen = -1, dtar = -1, dent = -1, datt = -1, dnorm = -1, ddla = -1, dout = -1;
    int *rows = NULL;
    int rc = -1;

    H5_ID(g, H5Gcreate2(f, s->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5_TRY(dw_attr_u64(g, "seed", s->seed));
    H5_TRY(dw_attr_str(g, "source", s->source));
    H5_TRY(dw_attr_int(g, "n_seq", N));
    H5_TRY(dw_attr_int(g, "T", T));

    /* targets [n_pairs, 3] and entities [n_spans, 3]: small, written whole */
    size_t n_pairs = 0, n_spans = 0, nb;
    for (int i = 0; i < N; i++) {
        n_pairs += (size_t)s->items[i].n_targets;
        n_spans += (size_t)s->items[i].n_entities;
    }
    size_t most = n_pairs > n_spans ? n_pairs : n_spans;
    if (ae_mul(most ? most : 1, 3 * sizeof(int), &nb) || !(rows = malloc(nb))) {
        ae_fail(err, "%s: out of memory for the targets of suite %s", h5_path, s->name);
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
    H5_ID(dtar, dw_dset_create(g, "targets", H5T_STD_I32LE, 2, tdims, NULL, 0, 0));
    const int root = andrea_mpi_rank() == 0; /* MPI: rank 0 writes the small tables */
    if (n_pairs) H5_TRY(dw_dset_write_slab(dtar, par->dxpl, root, H5T_NATIVE_INT, 2, zero2, tdims, rows));
    r = 0;
    for (int i = 0; i < N; i++)
        for (int e = 0; e < s->items[i].n_entities; e++, r++) {
            rows[3 * r] = i;
            rows[3 * r + 1] = s->items[i].entities[2 * e];
            rows[3 * r + 2] = s->items[i].entities[2 * e + 1];
        }
    hsize_t edims[2] = {n_spans, 3};
    H5_ID(dent, dw_dset_create(g, "entities", H5T_STD_I32LE, 2, edims, NULL, 0, 0));
    if (n_spans) H5_TRY(dw_dset_write_slab(dent, par->dxpl, root, H5T_NATIVE_INT, 2, zero2, edims, rows));
    *bytes += (long long)((n_pairs + n_spans) * 3 * sizeof(int));

    /* the per-sequence datasets */
    hsize_t d_tok[2] = {(hsize_t)N, (hsize_t)T}, c_tok[2] = {(hsize_t)(N < 256 ? N : 256), (hsize_t)T};
    hsize_t d_len[1] = {(hsize_t)N};
    hsize_t d_att[5] = {(hsize_t)N, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)T}, c_att[5] = {1, 1, 1, (hsize_t)T, (hsize_t)T};
    hsize_t d_val[4] = {(hsize_t)N, (hsize_t)L, (hsize_t)H, (hsize_t)T}, c_val[4] = {1, (hsize_t)L, (hsize_t)H, (hsize_t)T};
    hsize_t d_out[5] = {(hsize_t)N, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)C}, c_out[5] = {1, 1, 1, (hsize_t)T, (hsize_t)C};
    H5_ID(dtok, dw_dset_create(g, "tokens", H5T_STD_I32LE, 2, d_tok, c_tok, 0, 0));
    H5_ID(dlen, dw_dset_create(g, "lengths", H5T_STD_I32LE, 1, d_len, NULL, 0, 0));
    H5_ID(datt, dw_dset_create(g, "attention", o->maps_fp32 ? H5T_IEEE_F32LE : f16, 5, d_att, c_att, o->gzip, 0));
    if (want_values) {
        H5_ID(dnorm, dw_dset_create(g, "head_out_norm", H5T_IEEE_F32LE, 4, d_val, c_val, 0, 0));
        H5_ID(ddla, dw_dset_create(g, "head_dla", H5T_IEEE_F32LE, 4, d_val, c_val, 0, 1));
    }
    if (want_head_out) {
        H5_ID(dout, dw_dset_create(g, "head_out", H5T_IEEE_F32LE, 5, d_out, c_out, o->gzip, 0));
        if (o->heads && o->contrib != ANDREA_CONTRIB_FULL) {
            /* which heads were written; the others read back as the fill value 0 */
            char list[4096];
            size_t len = 0;
            list[0] = 0;
            for (int h = 0; h < L * H && len + 16 < sizeof list; h++)
                if (o->heads[h]) len += (size_t)snprintf(list + len, sizeof list - len, "%s%d.%d", len ? "," : "", h / H, h % H);
            H5_TRY(dw_attr_str(dout, "heads", list));
        }
    }

    const hid_t ds[8] = {dtok, dlen, dtar, dent, datt, dnorm, ddla, dout};
    if (describe_suite(g, s, L, H, C, n_pairs, n_spans, ds, o->tok, par, h5_path, err)) goto fail;

    const size_t map = (size_t)T * T, per_seq_maps = (size_t)L * H * map;
#ifdef ANDREA_HAVE_CUDA
    if (bb->pipe) {
        if (write_suite_stream(m->path, s, B, L, H, T, o, f16, bb, par->dxpl, dtok, dlen, datt, dnorm, ddla, prog, bytes, h5_path,
                               err))
            goto fail;
        rc = 0;
        goto fail; /* the common cleanup below */
    }
#endif
    /* MPI: the job's batches (every suite's, in file order, cut exactly as a serial run cuts
     * them) are sharded over the ranks, so each sequence is computed in the same batch as by the
     * serial tool (CPU results may depend on the batch, never on the rank). This suite's batches
     * [blo, bhi) are this rank's (serial: all); every rank takes as many steps as the rank with
     * the most, the steps past its own batches writing nothing. */
    const long long n_batches = (N + B - 1) / B;
    long long blo, bhi;
    andrea_shard_part(n_batches_all, batch_off, n_batches, andrea_mpi_rank(), andrea_mpi_size(), &blo, &bhi);
    const long long n_steps = andrea_shard_part_max(n_batches_all, batch_off, n_batches, andrea_mpi_size());
    for (long long bi = 0; bi < n_steps; bi++) {
        const int active = blo + bi < bhi;
        int b0 = active ? (int)((blo + bi) * B) : 0;
        int nb_seq = !active ? 0 : N - b0 < B ? N - b0 : B;
        int frc = 0;
        if (ae_interrupted) frc = ae_fail(err, "%s: interrupted", o->out_path);
        for (int b = 0; b < nb_seq && !frc; b++) {
            const probe_item *it = &s->items[b0 + b];
            memset(bb->tokens + (size_t)b * T, 0, sizeof(int) * (size_t)T);
            memcpy(bb->tokens + (size_t)b * T, it->tokens, sizeof(int) * (size_t)it->n_tokens);
            bb->lengths[b] = it->n_tokens;
        }
        andrea_forward_io io = {0};
        io.B = nb_seq;
        io.T = T;
        io.tokens = bb->tokens;
        io.lengths = bb->lengths;
        io.attn = bb->attn;
        io.head_out = want_head_out ? bb->head_out : NULL;
        io.head_out_norm = want_values ? bb->norm : NULL;
        io.head_dla = want_values ? bb->dla : NULL;
        double t0 = ae_now_seconds();
        if (!frc && active) frc = andrea_engine_forward(eng, &io, err);
        PAR_AGREE(frc, par);

        /* The format promises zeros at padded query rows (and NaN DLA without a next token),
         * whatever the backend leaves there. */
        for (int b = 0; b < nb_seq; b++) {
            int len = bb->lengths[b];
            if (len == T) continue;
            for (int lh = 0; lh < L * H; lh++) {
                size_t base = (size_t)b * L * H + (size_t)lh;
                memset(bb->attn + base * map + (size_t)len * T, 0, sizeof(float) * (size_t)(T - len) * T);
                if (want_values) {
                    for (int t = len; t < T; t++) {
                        bb->norm[base * T + t] = 0.0f;
                        bb->dla[base * T + t] = NAN;
                    }
                }
                if (want_head_out)
                    memset(bb->head_out + base * T * C + (size_t)len * C, 0, sizeof(float) * (size_t)(T - len) * C);
            }
        }
        if (want_values)
            PAR_AGREE(active ? check_values_finite(bb->norm, bb->dla, bb->lengths, nb_seq, L, H, T, m->path, err) : 0,
                      par);

        hsize_t s_tok[2] = {(hsize_t)b0, 0}, n_tok[2] = {(hsize_t)nb_seq, (hsize_t)T};
        hsize_t s_len[1] = {(hsize_t)b0}, n_len[1] = {(hsize_t)nb_seq};
        H5_TRY(dw_dset_write_slab(dtok, par->dxpl, active, H5T_NATIVE_INT, 2, s_tok, n_tok, bb->tokens));
        H5_TRY(dw_dset_write_slab(dlen, par->dxpl, active, H5T_NATIVE_INT, 1, s_len, n_len, bb->lengths));
        hsize_t s5[5] = {(hsize_t)b0, 0, 0, 0, 0}, n_att[5] = {(hsize_t)nb_seq, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)T};
        size_t n_maps = (size_t)nb_seq * per_seq_maps;
        if (!o->maps_fp32) dw_f32_to_f16_all(bb->attn16, bb->attn, n_maps);
        double t1 = ae_now_seconds();
        bb->t_forward += t1 - t0;
        const void *att = o->maps_fp32 ? (const void *)bb->attn : (const void *)bb->attn16;
        if (dw_maps_direct_ok(o))
            H5_TRY(dw_write_maps(datt, par->dxpl, H5T_NATIVE_FLOAT, 1, b0, 0, (size_t)nb_seq * L * H, L, H, T,
                                 o->maps_fp32 ? 4 : 2, att, NULL, NULL, o->gzip));
        else
            H5_TRY(dw_dset_write_slab(datt, par->dxpl, active, o->maps_fp32 ? H5T_NATIVE_FLOAT : f16, 5, s5, n_att, att));
        *bytes += (long long)(n_maps * (o->maps_fp32 ? sizeof(float) : sizeof(uint16_t)));
        double t2 = ae_now_seconds();
        bb->t_maps += t2 - t1;
        if (want_values) {
            hsize_t s4[4] = {(hsize_t)b0, 0, 0, 0}, n4[4] = {(hsize_t)nb_seq, (hsize_t)L, (hsize_t)H, (hsize_t)T};
            H5_TRY(dw_dset_write_slab(dnorm, par->dxpl, active, H5T_NATIVE_FLOAT, 4, s4, n4, bb->norm));
            H5_TRY(dw_dset_write_slab(ddla, par->dxpl, active, H5T_NATIVE_FLOAT, 4, s4, n4, bb->dla));
            *bytes += (long long)(2 * (size_t)nb_seq * L * H * T * sizeof(float));
        }
        if (want_head_out) {
            if (o->contrib == ANDREA_CONTRIB_FULL) {
                hsize_t n_out[5] = {(hsize_t)nb_seq, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)C};
                H5_TRY(dw_dset_write_slab(dout, par->dxpl, active, H5T_NATIVE_FLOAT, 5, s5, n_out, bb->head_out));
                *bytes += (long long)((size_t)nb_seq * L * H * T * C * sizeof(float));
            } else {
                /* only the chosen heads' chunks exist in the file (MPI: every rank makes the
                 * calls of a full batch, those past its sequences selecting nothing) */
                const int nb_calls = andrea_mpi_parallel() ? B : nb_seq;
                for (int b = 0; b < nb_calls; b++)
                    for (int lh = 0; lh < L * H; lh++) {
                        if (!o->heads[lh]) continue;
                        hsize_t st[5] = {(hsize_t)(b0 + b), (hsize_t)(lh / H), (hsize_t)(lh % H), 0, 0};
                        H5_TRY(dw_dset_write_slab(dout, par->dxpl, b < nb_seq, H5T_NATIVE_FLOAT, 5, st, c_out,
                                               bb->head_out + ((size_t)b * L * H + (size_t)lh) * T * C));
                        if (b < nb_seq) *bytes += (long long)((size_t)T * C * sizeof(float));
                    }
            }
        }
        *bytes += (long long)((size_t)nb_seq * (T + 1) * sizeof(int));
        bb->t_other += ae_now_seconds() - t2;
        ae_progress_add(prog, (uint64_t)nb_seq);
    }
    rc = 0;
fail:
    free(rows);
    if (rc && andrea_mpi_parallel() && !par->agreed) return -1; /* see the header: no collective close */
    hid_t ids[] = {dtok, dlen, dtar, dent, datt, dnorm, ddla, dout};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i] >= 0 && H5Dclose(ids[i]) < 0 && rc == 0) rc = ae_fail(err, "%s: HDF5 cannot close a dataset of %s", h5_path, s->name);
    if (g >= 0 && H5Gclose(g) < 0 && rc == 0) rc = ae_fail(err, "%s: HDF5 cannot close group %s", h5_path, s->name);
    return rc;
}
