/* forward_loop.c — the one forward loop: one suite's batches through the engine, each handed to
 * the run's sinks (batch_sink.h; the HDF5 writer of dump/dump_write_suite.c is one of them).
 *
 * Two sources of batches, one sequence of sink calls:
 *   - the synchronous engine (CPU, CUDA without streaming, every MPI run): fill tokens, forward,
 *     zero the padded positions, check the values are finite, convert the maps to fp16 when the
 *     run stores fp16, hand the batch (its maps as one piece) to every sink;
 *   - the CUDA streaming pipeline (kernels/cuda_engine.h): batch k+1 computes while batch k is
 *     handed over; sinks that work on the device (the head scorer's GPU kernel) get its device
 *     outputs first; the maps the other sinks want (all of them for the HDF5 writer, the first
 *     examples for the report collector, none when no such sink) come piece by piece from the
 *     pipeline's pinned ring and every piece goes to those sinks before the next is asked for.
 * MPI: the job's batches (every suite's, in file order, cut exactly as a serial run cuts them) are
 * sharded over the ranks; every rank takes as many steps as the rank with the most, the steps
 * past its own batches handing nb = 0 batches (the writer's collective writes select nothing).
 * Failure contract: -1 with err filled; a failure all ranks agreed on sets *agreed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/atomic_file.h"
#include "../common/finite.h"
#include "../common/half.h"
#include "../common/mpi_shard.h"
#include "run_internal.h"

/* fp32 -> IEEE fp16 of n values, on every OpenMP thread (a batch is millions of values). */
static void f32_to_f16_all(uint16_t *dst, const float *src, size_t n) {
    const long long blocks = (long long)((n + 65535) / 65536);
#pragma omp parallel for schedule(static)
    for (long long b = 0; b < blocks; b++) {
        const size_t at = (size_t)b * 65536;
        andrea_f32_to_f16_n(dst + at, src + at, n - at < 65536 ? n - at : 65536);
    }
}

/* The values a batch hands on, after the padded positions were set: every norm, and every DLA
 * with a next token (t < length - 1), must be finite. The CPU engine refuses a forward that
 * overflows float32 itself; on a GPU this is where it shows: a NaN or Inf in any head's map or
 * output, or in the residual stream it feeds, reaches the norms of that head or of every later
 * layer's heads, or the final LayerNorm of the DLA. (A --contrib none run has neither, and its
 * GPU maps are not scanned: that would cost a pass over every map byte.) */
static int check_values_finite(const float *norm, const float *dla, const int *lengths, int nb, int L, int H, int T,
                               const char *model_path, ae_error *err) {
    const size_t lh = (size_t)L * H;
    for (int b = 0; b < nb; b++)
        for (size_t k = 0; k < lh; k++) {
            const size_t row = ((size_t)b * lh + k) * (size_t)T;
            const size_t with_next = lengths[b] > 1 ? (size_t)lengths[b] - 1 : 0;
            if (ae_any_nonfinite(norm + row, (size_t)T) || ae_any_nonfinite(dla + row, with_next))
                return andrea_fail(err, "%s: the forward overflows float32 (non-finite output of layer %zu, head %zu): the "
                                    "checkpoint's weights are far outside a trained model's range",
                               model_path, k / (size_t)H, k % (size_t)H);
        }
    return 0;
}

/* Every sink's maps callback on one piece (on_host: only the sinks marked; NULL: all); the
 * writer's time counts as map writes, the others' as sink time. */
static int sinks_maps(const run_sinks *sk, const unsigned char *on_host, batch_bufs *bb, const andrea_batch *b,
                      size_t first, size_t n, const void *piece, ae_error *err) {
    for (int i = 0; i < sk->n; i++) {
        if (!sk->v[i].maps || (on_host && !on_host[i])) continue;
        double t0 = andrea_now_seconds();
        int rc = sk->v[i].maps(sk->v[i].self, b, first, n, piece, err);
        double dt = andrea_now_seconds() - t0;
        if (sk->v[i].is_writer) bb->t_maps += dt;
        else bb->t_sinks += dt;
        if (rc) return -1;
    }
    return 0;
}

static int sinks_batch(const run_sinks *sk, batch_bufs *bb, const andrea_batch *b, ae_error *err) {
    for (int i = 0; i < sk->n; i++) {
        if (!sk->v[i].batch) continue;
        double t0 = andrea_now_seconds();
        int rc = sk->v[i].batch(sk->v[i].self, b, err);
        double dt = andrea_now_seconds() - t0;
        if (sk->v[i].is_writer) bb->t_other += dt;
        else bb->t_sinks += dt;
        if (rc) return -1;
    }
    return 0;
}

static void fill_tokens(batch_bufs *bb, const probe_suite *s, int b0, int nb, int T) {
    for (int b = 0; b < nb; b++) {
        const probe_item *it = &s->items[b0 + b];
        memset(bb->tokens + (size_t)b * T, 0, sizeof(int) * (size_t)T);
        memcpy(bb->tokens + (size_t)b * T, it->tokens, sizeof(int) * (size_t)it->n_tokens);
        bb->lengths[b] = it->n_tokens;
    }
}

static andrea_batch batch_of(const run_loop *lp, const probe_suite *s, int b0, int nb, const batch_bufs *bb) {
    andrea_batch b;
    memset(&b, 0, sizeof b);
    b.suite = lp->suite;
    b.s = s;
    b.b0 = b0;
    b.nb = nb;
    b.L = lp->m->cfg.n_layer;
    b.H = lp->m->cfg.n_head;
    b.C = lp->m->cfg.d_model;
    b.T = s->max_len;
    b.tokens = bb->tokens;
    b.lengths = bb->lengths;
    b.maps_fp16 = !lp->o->maps_fp32;
    if (lp->o->contrib != ANDREA_CONTRIB_NONE) {
        b.head_out_norm = bb->norm;
        b.head_dla = bb->dla;
    }
    return b;
}

/* The format promises zeros at padded query rows (and NaN DLA without a next token), whatever
 * the backend leaves there; sinks see the batch as the file will hold it. */
static void zero_padding(batch_bufs *bb, int nb, int L, int H, int T, int C, int want_values, int want_head_out) {
    const size_t map = (size_t)T * T;
    for (int b = 0; b < nb; b++) {
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
}

#ifdef ANDREA_HAVE_CUDA
/* A GPU batch to the sinks that take it on the device (device_batch); sk->on_host marks the
 * others. Returns the number of the batch's maps the host sinks need (0: no map leaves the GPU):
 * every map up to the last sequence one of them wants. */
static int sinks_device(const run_sinks *sk, batch_bufs *bb, const andrea_batch *b, size_t *n_host, ae_error *err) {
    andrea_cuda_device_outputs out;
    andrea_device_batch d;
    int have = 0, need = 0;
    const size_t lh = (size_t)b->L * b->H;
    for (int i = 0; i < sk->n; i++) {
        sk->on_host[i] = 1;
        if (!sk->v[i].device_batch) continue;
        if (!have) {
            if (andrea_cuda_pipeline_device(bb->pipe, &out, &d.stream, err)) return -1;
            d.attn = out.attn;
            d.head_out_norm = b->head_out_norm ? out.head_out_norm : NULL;
            d.head_dla = b->head_dla ? out.head_dla : NULL;
            have = 1;
        }
        const double t0 = andrea_now_seconds();
        const int rc = sk->v[i].device_batch(sk->v[i].self, b, &d, err);
        bb->t_sinks += andrea_now_seconds() - t0;
        if (rc < 0) return -1;
        sk->on_host[i] = rc == 1;
    }
    for (int i = 0; i < sk->n && need < b->nb; i++) {
        if (!sk->on_host[i] || !sk->v[i].maps) continue;
        if (!sk->v[i].wants_host_maps) need = b->nb;
        for (int s = b->nb; s > need; s--)
            if (sk->v[i].wants_host_maps(sk->v[i].self, b, b->b0 + s - 1)) {
                need = s;
                break;
            }
    }
    *n_host = (size_t)need * lh;
    return 0;
}

/* The batch handed back last, whose values are in bb already, to the sinks: the device sinks,
 * then the host maps the others want, piece by piece, then every sink's batch(). */
static int hand_stream_batch(const run_loop *lp, batch_bufs *bb, andrea_batch *b, ae_error *err) {
    const size_t lh = (size_t)b->L * b->H;
    size_t n_host;
    b->maps_padding_zeroed = 0;
    if (sinks_device(lp->sinks, bb, b, &n_host, err)) return -1;
    if (n_host > 0 && n_host < (size_t)b->nb * lh && andrea_cuda_pipeline_maps_upto(bb->pipe, n_host, err)) return -1;
    for (size_t first = 0, n = 0; first < n_host; first += n) {
        const void *piece;
        if (andrea_cuda_pipeline_maps(bb->pipe, first, &piece, &n, err)) return -1;
        if (sinks_maps(lp->sinks, lp->sinks->on_host, bb, b, first, n, piece, err)) return -1;
    }
    return sinks_batch(lp->sinks, bb, b, err);
}

/* One suite through the CUDA streaming pipeline: batch k+1 computes and batch k copies to pinned
 * memory while batch k-1 goes to the sinks. */
static int run_suite_stream(const run_loop *lp, const probe_suite *s, int B, batch_bufs *bb, ae_progress *prog,
                            ae_error *err) {
    const int N = s->n_items, L = lp->m->cfg.n_layer, H = lp->m->cfg.n_head, T = s->max_len;
    const int want_values = lp->o->contrib != ANDREA_CONTRIB_NONE;
    const size_t lh = (size_t)L * H;
    const long long n_batches = (N + B - 1) / B;
    for (long long bi = 0; bi <= n_batches; bi++) {
        andrea_cuda_ready rd;
        double t0 = andrea_now_seconds();
        if (bi < n_batches) {
            if (andrea_interrupted) return andrea_fail(err, "%s: interrupted", lp->what);
            const int b0 = (int)(bi * B), nb = N - b0 < B ? N - b0 : B;
            fill_tokens(bb, s, b0, nb, T);
            andrea_forward_io io = {0};
            io.B = nb;
            io.T = T;
            io.tokens = bb->tokens; /* copied by submit before it returns */
            io.lengths = bb->lengths;
            if (andrea_cuda_pipeline_submit(bb->pipe, &io, b0, &rd, err)) return -1;
        } else if (andrea_cuda_pipeline_flush(bb->pipe, &rd, err)) {
            return -1;
        }
        bb->t_forward += andrea_now_seconds() - t0;
        if (!rd.valid) continue;
        const int b0 = (int)rd.tag, nb = rd.B;
        fill_tokens(bb, s, b0, nb, T); /* free again: the next batch's tokens were copied */
        andrea_batch b = batch_of(lp, s, b0, nb, bb);
        if (want_values) {
            t0 = andrea_now_seconds();
            const size_t nv = (size_t)nb * lh * T;
            memcpy(bb->norm, rd.head_out_norm, nv * sizeof(float));
            memcpy(bb->dla, rd.head_dla, nv * sizeof(float));
            for (int i = 0; i < nb; i++) {
                const int len = bb->lengths[i];
                for (size_t k = 0; k < lh; k++)
                    for (int t = len - 1; t < T; t++) {
                        if (t >= len) bb->norm[((size_t)i * lh + k) * T + t] = 0.0f;
                        bb->dla[((size_t)i * lh + k) * T + t] = NAN; /* no next token */
                    }
            }
            if (check_values_finite(bb->norm, bb->dla, bb->lengths, nb, L, H, T, lp->m->path, err)) return -1;
            bb->t_other += andrea_now_seconds() - t0;
        }
        if (hand_stream_batch(lp, bb, &b, err)) return -1;
        andrea_progress_add(prog, (uint64_t)nb);
    }
    return 0;
}
#endif

/* A synchronous batch, its maps and values in bb (padding zeroed), to every sink: its maps as one
 * piece, then batch(). */
static int hand_host_batch(const run_loop *lp, const probe_suite *s, int b0, int nb, batch_bufs *bb, ae_error *err) {
    const andrea_run_options *o = lp->o;
    const size_t n_maps = (size_t)nb * lp->m->cfg.n_layer * lp->m->cfg.n_head;
    andrea_batch b = batch_of(lp, s, b0, nb, bb);
    b.maps_padding_zeroed = 1;
    b.head_out = o->contrib == ANDREA_CONTRIB_FULL || o->heads != NULL ? bb->head_out : NULL;
    const void *att = o->maps_fp32 ? (const void *)bb->attn : (const void *)bb->attn16;
    return sinks_maps(lp->sinks, NULL, bb, &b, 0, n_maps, att, err) || sinks_batch(lp->sinks, bb, &b, err) ? -1 : 0;
}

int andrea_run_suite(const run_loop *lp, const probe_suite *s, int B, batch_bufs *bb, ae_progress *prog, int *agreed,
                     ae_error *err) {
    const int L = lp->m->cfg.n_layer, H = lp->m->cfg.n_head, C = lp->m->cfg.d_model, T = s->max_len, N = s->n_items;
    const andrea_run_options *o = lp->o;
    const int want_head_out = o->contrib == ANDREA_CONTRIB_FULL || o->heads != NULL;
    const int want_values = o->contrib != ANDREA_CONTRIB_NONE;
#ifdef ANDREA_HAVE_CUDA
    if (bb->pipe) return run_suite_stream(lp, s, B, bb, prog, err);
#endif
    const long long n_batches = (N + B - 1) / B;
    long long blo, bhi;
    andrea_shard_part(lp->n_batches_all, lp->batch_off, n_batches, andrea_mpi_rank(), andrea_mpi_size(), &blo, &bhi);
    const long long n_steps = andrea_shard_part_max(lp->n_batches_all, lp->batch_off, n_batches, andrea_mpi_size());
    for (long long bi = 0; bi < n_steps; bi++) {
        const int active = blo + bi < bhi;
        int b0 = active ? (int)((blo + bi) * B) : 0;
        int nb = !active ? 0 : N - b0 < B ? N - b0 : B;
        int frc = 0;
        if (andrea_interrupted) frc = andrea_fail(err, "%s: interrupted", lp->what);
        if (!frc) fill_tokens(bb, s, b0, nb, T);
        andrea_forward_io io = {0};
        io.B = nb;
        io.T = T;
        io.tokens = bb->tokens;
        io.lengths = bb->lengths;
        io.attn = bb->attn;
        io.head_out = want_head_out ? bb->head_out : NULL;
        io.head_out_norm = want_values ? bb->norm : NULL;
        io.head_dla = want_values ? bb->dla : NULL;
        double t0 = andrea_now_seconds();
        if (!frc && active) frc = andrea_engine_forward(lp->eng, &io, err);
        if (andrea_run_agree(frc, agreed, err)) return -1;
        zero_padding(bb, nb, L, H, T, C, want_values, want_head_out);
        if (want_values &&
            andrea_run_agree(active ? check_values_finite(bb->norm, bb->dla, bb->lengths, nb, L, H, T, lp->m->path, err) : 0,
                             agreed, err))
            return -1;
        const size_t n_maps = (size_t)nb * L * H;
        if (!o->maps_fp32) f32_to_f16_all(bb->attn16, bb->attn, n_maps * (size_t)T * T);
        bb->t_forward += andrea_now_seconds() - t0;
        if (hand_host_batch(lp, s, b0, nb, bb, err)) return -1;
        andrea_progress_add(prog, (uint64_t)nb);
    }
    return 0;
}

int andrea_run_replay(const run_loop *lp, const probe_suite *s, batch_bufs *bb, ae_progress *prog, ae_error *err) {
    const int nb = s->n_items;
    if (nb > bb->max_B) return andrea_fail(err, "%s: suite %s is not one batch: it cannot share a forward", lp->what, s->name);
    fill_tokens(bb, s, 0, nb, s->max_len);
    int rc;
#ifdef ANDREA_HAVE_CUDA
    andrea_batch b = batch_of(lp, s, 0, nb, bb);
    if (bb->pipe) rc = andrea_cuda_pipeline_rewind(bb->pipe, err) || hand_stream_batch(lp, bb, &b, err) ? -1 : 0;
    else
#endif
        rc = hand_host_batch(lp, s, 0, nb, bb, err);
    if (!rc) andrea_progress_add(prog, (uint64_t)nb);
    return rc;
}
