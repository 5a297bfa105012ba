/* dump_write.c — streams instrumented forwards into the HDF5 dump (dump_write.h, dump.h).
 *
 * Per suite: create the group and its datasets at full size (chunked so one (seq, layer, head)
 * map is one chunk), then for each batch of at most B sequences: pack tokens, run the forward,
 * convert maps to fp16 when asked, and write the batch as one hyperslab per dataset. Buffers are
 * sized once for B sequences of the longest suite, so peak memory does not grow with the number
 * of sequences. Everything goes to "<out>.tmp-<pid>", renamed over out_path only after H5Fclose
 * succeeded; every failure path removes the temporary file.
 * MPI (mpi_shard.h, dump_write_mpi.h; serial runs take none of these branches): every rank opens
 * the one file through MPI-IO, creates every group, dataset and attribute with identical
 * arguments, and writes its contiguous shard of each suite's sequences with collective
 * transfers; ranks with fewer batches take part in the extra writes selecting nothing. Rank 0
 * names, creates-checks and renames the file. Failures before a write (bad input, engine,
 * forward, interrupt) are agreed by all ranks (andrea_mpi_agree), so all leave together; a
 * failure inside a collective HDF5 call is not, and returns at once without closing (the CLI then
 * ends the job through andrea_mpi_finish).
 */
#include "dump_write.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/atomic_file.h"
#include "../common/checked_size.h"
#include "../common/progress.h"
#include "../common/sha256.h"
#include "checkpoint.h"
#include "dump.h"
#include "dump_h5.h"
#include "dump_write_mpi.h"
#include "mpi_shard.h"
#ifdef ANDREA_HAVE_CUDA
#include "../kernels/cuda_engine.h"
#endif

#define DEFAULT_BUDGET ((size_t)512 << 20)
#define MAX_AUTO_BATCH 64

void andrea_dump_options_init(andrea_dump_options *o) {
    memset(o, 0, sizeof *o);
    o->device = ANDREA_DEVICE_AUTO;
    o->contrib = ANDREA_CONTRIB_NORM;
}

/* The IEEE binary16 file type: HDF5 1.10 has no predefined half type, so derive one from the
 * 32-bit IEEE type (sign bit 15, exponent bits 10-14 with bias 15, mantissa bits 0-9); h5py and
 * h5dump read it as float16. */
static hid_t make_f16_type(void) {
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    if (t < 0) return -1;
    if (H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_size(t, 2) < 0 || H5Tset_precision(t, 16) < 0 ||
        H5Tset_ebias(t, 15) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* ---- attributes ---- */

static herr_t attr_write(hid_t loc, const char *name, hid_t type, const void *value) {
    hid_t sp = H5Screate(H5S_SCALAR);
    if (sp < 0) return -1;
    hid_t a = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Awrite(a, type, value);
    if (a >= 0 && H5Aclose(a) < 0) rc = -1;
    H5Sclose(sp);
    return rc;
}

/* Fixed-length, NUL-terminated UTF-8 strings, stored inside the attribute message. Not
 * variable-length ones: those live in the global heap, and HDF5 1.10 crashes reading a damaged
 * global heap, which the reader must survive. h5py reads them as numpy.bytes_ (.decode()). */
static herr_t attr_str(hid_t loc, const char *name, const char *value) {
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return -1;
    herr_t rc = H5Tset_size(t, strlen(value) + 1);
    if (rc >= 0) rc = H5Tset_strpad(t, H5T_STR_NULLTERM);
    if (rc >= 0) rc = H5Tset_cset(t, H5T_CSET_UTF8);
    if (rc >= 0) rc = attr_write(loc, name, t, value);
    H5Tclose(t);
    return rc;
}

static herr_t attr_int(hid_t loc, const char *name, int v) { return attr_write(loc, name, H5T_NATIVE_INT, &v); }

static herr_t attr_u64(hid_t loc, const char *name, uint64_t v) {
    return attr_write(loc, name, H5T_NATIVE_UINT64, &v);
}

/* ---- datasets ---- */

/* Creates a dataset of rank n; chunk == NULL means contiguous. gzip applies to chunked ones. */
static hid_t dset_create(hid_t group, const char *name, hid_t type, int rank, const hsize_t *dims,
                         const hsize_t *chunk, int gzip, int fill_nan) {
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    if (sp < 0) return -1;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = -1;
    int ok = dcpl >= 0;
    int empty = 0;
    for (int i = 0; i < rank; i++) empty |= dims[i] == 0;
    if (ok && chunk && !empty) {
        ok = H5Pset_chunk(dcpl, rank, chunk) >= 0;
        if (ok && gzip > 0) ok = H5Pset_deflate(dcpl, (unsigned)gzip) >= 0;
    }
    if (ok && fill_nan) {
        float nan = NAN;
        ok = H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &nan) >= 0;
    }
    /* Chunks are allocated as they are written: no time spent pre-filling a file we overwrite. */
    if (ok && chunk && !empty) ok = H5Pset_fill_time(dcpl, H5D_FILL_TIME_IFSET) >= 0;
    if (ok) d = H5Dcreate2(group, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dcpl >= 0) H5Pclose(dcpl);
    H5Sclose(sp);
    return d;
}

/* Writes buf (memory type mtype, shape count) at offset start of d through transfer list dxpl.
 * active == 0 (MPI: this rank has nothing for a collective write) selects nothing. */
static herr_t dset_write_slab(hid_t d, hid_t dxpl, int active, hid_t mtype, int rank, const hsize_t *start,
                              const hsize_t *count, const void *buf) {
    hid_t fs = H5Dget_space(d);
    if (fs < 0) return -1;
    hid_t ms = H5Screate_simple(rank, count, NULL);
    herr_t rc = ms < 0 ? -1 : active ? H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL)
                                     : H5Sselect_none(fs) < 0 ? -1 : H5Sselect_none(ms);
    if (rc >= 0) rc = H5Dwrite(d, mtype, ms, fs, dxpl, buf);
    if (ms >= 0) H5Sclose(ms);
    H5Sclose(fs);
    return rc;
}

/* Whether the attention maps can go to the file with H5Dwrite_chunk (write_maps_direct): no
 * filter to apply, one process writing (MPI-IO writes collectively through H5Dwrite), and a
 * little-endian host, so the bytes in memory are the file type's bytes (IEEE fp16/fp32 LE). */
static int maps_direct_ok(const andrea_dump_options *o) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return o->gzip == 0 && !andrea_mpi_parallel();
#else
    (void)o;
    return 0;
#endif
}

/* Writes the maps [nb, L, H, T, T] of sequences b0.. (in memory in chunk order, esz bytes a
 * value) one chunk (= one map) per H5Dwrite_chunk. Why: H5Dwrite of a batch's hyperslab runs
 * HDF5's selection, type-path and chunk-cache machinery per 32 KB chunk; the direct write is one
 * index update and one pwrite, 1.6x the rate here (bench/bench_h5_maps.c; bench/RESULTS.md).
 * lengths (may be NULL: rows already zeroed): query rows t >= lengths[b] are written as zeros,
 * through a one-map copy in stage (the source may be a buffer the caller must not change). */
static herr_t write_maps_direct(hid_t d, int b0, int nb, int L, int H, int T, size_t esz, const void *maps,
                                const int *lengths, void *stage) {
    const size_t map_bytes = (size_t)T * T * esz, lh = (size_t)L * H;
    for (int b = 0; b < nb; b++) {
        const size_t len = lengths ? (size_t)lengths[b] : (size_t)T;
        for (size_t k = 0; k < lh; k++) {
            const char *src = (const char *)maps + ((size_t)b * lh + k) * map_bytes;
            if (len < (size_t)T) {
                memcpy(stage, src, len * T * esz);
                memset((char *)stage + len * T * esz, 0, map_bytes - len * T * esz);
                src = stage;
            }
            hsize_t off[5] = {(hsize_t)(b0 + b), (hsize_t)(k / (size_t)H), (hsize_t)(k % (size_t)H), 0, 0};
            if (H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, map_bytes, src) < 0) return -1;
        }
    }
    return 0;
}

/* ---- validation ---- */

static int check_suites(const andrea_model *m, const probe_suite *s, int n, ae_error *err) {
    if (n < 1) return ae_fail(err, "%s: no probe suites to dump", m->path);
    for (int i = 0; i < n; i++) {
        const char *name = s[i].name;
        if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
            return ae_fail(err, "%s: suite name '%s' cannot be an HDF5 group name", s[i].source, name);
        for (int j = 0; j < i; j++)
            if (!strcmp(s[j].name, name)) return ae_fail(err, "%s: suite '%s' given twice", s[i].source, name);
        if (s[i].n_items < 1) return ae_fail(err, "%s: suite '%s' has no items", s[i].source, name);
        for (int k = 0; k < s[i].n_items; k++) {
            const probe_item *it = &s[i].items[k];
            if (it->n_tokens < 1 || it->n_tokens > m->cfg.max_seq_len || it->n_tokens > s[i].max_len)
                return ae_fail(err, "%s: suite '%s' item %d has %d tokens (model allows 1..%d)", s[i].source, name, k,
                               it->n_tokens, m->cfg.max_seq_len);
            for (int t = 0; t < it->n_tokens; t++)
                if (it->tokens[t] < 0 || it->tokens[t] >= m->cfg.vocab_size)
                    return ae_fail(err, "%s: suite '%s' item %d: token %d is %d, outside the vocabulary 0..%d",
                                   s[i].source, name, k, t, it->tokens[t], m->cfg.vocab_size - 1);
            for (int t = 0; t < it->n_targets; t++)
                if (it->targets[t].key < 0 || it->targets[t].key > it->targets[t].query ||
                    it->targets[t].query >= it->n_tokens)
                    return ae_fail(err, "%s: suite '%s' item %d: target (%d, %d) out of range", s[i].source, name,
                                   k, it->targets[t].query, it->targets[t].key);
            for (int e = 0; e < it->n_entities; e++)
                if (it->entities[2 * e] < 0 || it->entities[2 * e] >= it->entities[2 * e + 1] ||
                    it->entities[2 * e + 1] > it->n_tokens)
                    return ae_fail(err, "%s: suite '%s' item %d: entity span %d out of range", s[i].source, name, k, e);
        }
    }
    return 0;
}

/* ---- root attributes ---- */

static int write_root_attrs(hid_t f, const andrea_model *m, const probe_suite *s, int n, const char *sha,
                            const andrea_dump_options *o, const char *engine, const char *h5_path, ae_error *err) {
    const andrea_config *c = &m->cfg;
    char cfg_json[512];
    snprintf(cfg_json, sizeof cfg_json,
             "{\"n_layer\": %d, \"n_head\": %d, \"d_model\": %d, \"head_dim\": %d, \"vocab_size\": %d, "
             "\"padded_vocab_size\": %d, \"max_seq_len\": %d}",
             c->n_layer, c->n_head, c->d_model, c->head_dim, c->vocab_size, c->padded_vocab_size, c->max_seq_len);
    size_t cap = 1;
    for (int i = 0; i < n; i++) cap += strlen(s[i].name) + 1;
    char *list = malloc(cap);
    if (!list) return ae_fail(err, "%s: out of memory", h5_path);
    list[0] = 0;
    for (int i = 0; i < n; i++) {
        if (i) strcat(list, ",");
        strcat(list, s[i].name);
    }
    static const char *const contrib_names[] = {"none", "norm", "full"};
    H5_TRY(attr_str(f, "andrea_version", ANDREA_VERSION));
    H5_TRY(attr_str(f, "checkpoint_path", m->path));
    H5_TRY(attr_str(f, "checkpoint_sha256", sha));
    H5_TRY(attr_str(f, "config", cfg_json));
    H5_TRY(attr_int(f, "n_layer", c->n_layer));
    H5_TRY(attr_int(f, "n_head", c->n_head));
    H5_TRY(attr_int(f, "d_model", c->d_model));
    H5_TRY(attr_int(f, "head_dim", c->head_dim));
    H5_TRY(attr_int(f, "vocab_size", c->vocab_size));
    H5_TRY(attr_int(f, "padded_vocab_size", c->padded_vocab_size));
    H5_TRY(attr_int(f, "max_seq_len", c->max_seq_len));
    H5_TRY(attr_str(f, "maps_dtype", o->maps_fp32 ? "fp32" : "fp16"));
    H5_TRY(attr_str(f, "contrib", contrib_names[o->contrib]));
    H5_TRY(attr_str(f, "suites", list));
    H5_TRY(attr_str(f, "engine", engine));
    H5_TRY(attr_str(f, "tokenizer", o->tokenizer ? o->tokenizer : ""));
    free(list);
    return 0;
fail:
    free(list);
    return -1;
}

/* ---- one suite ---- */

typedef struct {
    /* per-batch buffers, sized for B sequences of max_T */
    int *tokens, *lengths;
    float *attn, *head_out, *norm, *dla;
    uint16_t *attn16;
    double t_forward, t_maps, t_other; /* seconds spent, for andrea_dump_stats */
#ifdef ANDREA_HAVE_CUDA
    andrea_cuda_pipeline *pipe; /* CUDA engine: the streaming pipeline (NULL: synchronous path) */
#endif
} batch_bufs;

/* Releases the batch buffers and the engine, on success and failure alike (the CUDA pipeline
 * first: it uses the engine). */
static void engine_and_bufs_close(andrea_engine *eng, batch_bufs *bb) {
#ifdef ANDREA_HAVE_CUDA
    andrea_cuda_pipeline_close(bb->pipe);
#endif
    andrea_engine_close(eng);
    free(bb->tokens);
    free(bb->lengths);
    free(bb->attn);
    free(bb->attn16);
    free(bb->norm);
    free(bb->dla);
    free(bb->head_out);
}

/* fp32 -> IEEE fp16 of n values, on every OpenMP thread (a batch is millions of values). */
static void f32_to_f16_all(uint16_t *dst, const float *src, size_t n) {
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; i++) dst[i] = andrea_f32_to_f16(src[i]);
}

#ifdef ANDREA_HAVE_CUDA
/* One suite through the CUDA streaming pipeline (kernels/cuda_engine.h): batch k+1 computes and
 * batch k copies to pinned memory while batch k-1 is written here. Same file content as the
 * synchronous path: padded rows are zeroed (in our staging buffers, never in the pipeline's). */
static int write_suite_stream(const probe_suite *s, int B, int L, int H, int T, const andrea_dump_options *o,
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
            H5_TRY(dset_write_slab(dtok, dxpl, 1, H5T_NATIVE_INT, 2, s_tok, n_tok, bb->tokens));
            H5_TRY(dset_write_slab(dlen, dxpl, 1, H5T_NATIVE_INT, 1, s_len, n_len, bb->lengths));
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
        int padded = 0;
        for (int b = 0; b < nb; b++) padded |= s->items[b0 + b].n_tokens < T;
        const size_t n_maps = (size_t)nb * lh * map, esz = o->maps_fp32 ? 4 : 2;
        const void *att = rd.attn;
        double t0 = ae_now_seconds();
        if (maps_direct_ok(o)) {
            int *len = bb->lengths; /* free again: the next batch's tokens were copied by submit */
            for (int b = 0; b < nb; b++) len[b] = s->items[b0 + b].n_tokens;
            H5_TRY(write_maps_direct(datt, b0, nb, L, H, T, esz, rd.attn, len, bb->attn));
            padded = 0;
            att = NULL;
        }
        if (padded) { /* zero the rows of padded queries in a copy */
            void *stage = o->maps_fp32 ? (void *)bb->attn : (void *)bb->attn16;
            memcpy(stage, rd.attn, n_maps * esz);
            for (int b = 0; b < nb; b++) {
                const size_t len = (size_t)s->items[b0 + b].n_tokens;
                if (len == (size_t)T) continue;
                for (size_t k = 0; k < lh; k++)
                    memset((char *)stage + (((size_t)b * lh + k) * map + len * T) * esz, 0, ((size_t)T - len) * T * esz);
            }
            att = stage;
        }
        hsize_t s5[5] = {(hsize_t)b0, 0, 0, 0, 0}, n5[5] = {(hsize_t)nb, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)T};
        if (att) H5_TRY(dset_write_slab(datt, dxpl, 1, o->maps_fp32 ? H5T_NATIVE_FLOAT : f16, 5, s5, n5, att));
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
            hsize_t s4[4] = {(hsize_t)b0, 0, 0, 0}, n4[4] = {(hsize_t)nb, (hsize_t)L, (hsize_t)H, (hsize_t)T};
            H5_TRY(dset_write_slab(dnorm, dxpl, 1, H5T_NATIVE_FLOAT, 4, s4, n4, bb->norm));
            H5_TRY(dset_write_slab(ddla, dxpl, 1, H5T_NATIVE_FLOAT, 4, s4, n4, bb->dla));
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

/* MPI: the transfer list, and whether a failure was agreed by all ranks (then the collective
 * closes are safe; otherwise a parallel failure must not close anything). Serial: H5P_DEFAULT, 0. */
typedef struct {
    hid_t dxpl;
    int agreed;
} par_state;

/* Every rank reaches this after the same steps: all fail together when one failed. */
#define PAR_AGREE(rc_, par_)                         \
    do {                                             \
        if (andrea_mpi_agree((rc_), err)) {          \
            (par_)->agreed = 1;                      \
            goto fail;                               \
        }                                            \
    } while (0)

static int write_suite(hid_t f, andrea_engine *eng, const andrea_model *m, const probe_suite *s, int B,
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
    H5_TRY(attr_u64(g, "seed", s->seed));
    H5_TRY(attr_str(g, "source", s->source));
    H5_TRY(attr_int(g, "n_seq", N));
    H5_TRY(attr_int(g, "T", T));

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
    H5_ID(dtar, dset_create(g, "targets", H5T_STD_I32LE, 2, tdims, NULL, 0, 0));
    const int root = andrea_mpi_rank() == 0; /* MPI: rank 0 writes the small tables */
    if (n_pairs) H5_TRY(dset_write_slab(dtar, par->dxpl, root, H5T_NATIVE_INT, 2, zero2, tdims, rows));
    r = 0;
    for (int i = 0; i < N; i++)
        for (int e = 0; e < s->items[i].n_entities; e++, r++) {
            rows[3 * r] = i;
            rows[3 * r + 1] = s->items[i].entities[2 * e];
            rows[3 * r + 2] = s->items[i].entities[2 * e + 1];
        }
    hsize_t edims[2] = {n_spans, 3};
    H5_ID(dent, dset_create(g, "entities", H5T_STD_I32LE, 2, edims, NULL, 0, 0));
    if (n_spans) H5_TRY(dset_write_slab(dent, par->dxpl, root, H5T_NATIVE_INT, 2, zero2, edims, rows));
    *bytes += (long long)((n_pairs + n_spans) * 3 * sizeof(int));

    /* the per-sequence datasets */
    hsize_t d_tok[2] = {(hsize_t)N, (hsize_t)T}, c_tok[2] = {(hsize_t)(N < 256 ? N : 256), (hsize_t)T};
    hsize_t d_len[1] = {(hsize_t)N};
    hsize_t d_att[5] = {(hsize_t)N, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)T}, c_att[5] = {1, 1, 1, (hsize_t)T, (hsize_t)T};
    hsize_t d_val[4] = {(hsize_t)N, (hsize_t)L, (hsize_t)H, (hsize_t)T}, c_val[4] = {1, (hsize_t)L, (hsize_t)H, (hsize_t)T};
    hsize_t d_out[5] = {(hsize_t)N, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)C}, c_out[5] = {1, 1, 1, (hsize_t)T, (hsize_t)C};
    H5_ID(dtok, dset_create(g, "tokens", H5T_STD_I32LE, 2, d_tok, c_tok, 0, 0));
    H5_ID(dlen, dset_create(g, "lengths", H5T_STD_I32LE, 1, d_len, NULL, 0, 0));
    H5_ID(datt, dset_create(g, "attention", o->maps_fp32 ? H5T_IEEE_F32LE : f16, 5, d_att, c_att, o->gzip, 0));
    if (want_values) {
        H5_ID(dnorm, dset_create(g, "head_out_norm", H5T_IEEE_F32LE, 4, d_val, c_val, 0, 0));
        H5_ID(ddla, dset_create(g, "head_dla", H5T_IEEE_F32LE, 4, d_val, c_val, 0, 1));
    }
    if (want_head_out) {
        H5_ID(dout, dset_create(g, "head_out", H5T_IEEE_F32LE, 5, d_out, c_out, o->gzip, 0));
        if (o->heads && o->contrib != ANDREA_CONTRIB_FULL) {
            /* which heads were written; the others read back as the fill value 0 */
            char list[4096];
            size_t len = 0;
            list[0] = 0;
            for (int h = 0; h < L * H && len + 16 < sizeof list; h++)
                if (o->heads[h]) len += (size_t)snprintf(list + len, sizeof list - len, "%s%d.%d", len ? "," : "", h / H, h % H);
            H5_TRY(attr_str(dout, "heads", list));
        }
    }

    const size_t map = (size_t)T * T, per_seq_maps = (size_t)L * H * map;
#ifdef ANDREA_HAVE_CUDA
    if (bb->pipe) {
        if (write_suite_stream(s, B, L, H, T, o, f16, bb, par->dxpl, dtok, dlen, datt, dnorm, ddla, prog, bytes, h5_path,
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

        hsize_t s_tok[2] = {(hsize_t)b0, 0}, n_tok[2] = {(hsize_t)nb_seq, (hsize_t)T};
        hsize_t s_len[1] = {(hsize_t)b0}, n_len[1] = {(hsize_t)nb_seq};
        H5_TRY(dset_write_slab(dtok, par->dxpl, active, H5T_NATIVE_INT, 2, s_tok, n_tok, bb->tokens));
        H5_TRY(dset_write_slab(dlen, par->dxpl, active, H5T_NATIVE_INT, 1, s_len, n_len, bb->lengths));
        hsize_t s5[5] = {(hsize_t)b0, 0, 0, 0, 0}, n_att[5] = {(hsize_t)nb_seq, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)T};
        size_t n_maps = (size_t)nb_seq * per_seq_maps;
        if (!o->maps_fp32) f32_to_f16_all(bb->attn16, bb->attn, n_maps);
        double t1 = ae_now_seconds();
        bb->t_forward += t1 - t0;
        const void *att = o->maps_fp32 ? (const void *)bb->attn : (const void *)bb->attn16;
        if (maps_direct_ok(o))
            H5_TRY(write_maps_direct(datt, b0, nb_seq, L, H, T, o->maps_fp32 ? 4 : 2, att, NULL, NULL));
        else
            H5_TRY(dset_write_slab(datt, par->dxpl, active, o->maps_fp32 ? H5T_NATIVE_FLOAT : f16, 5, s5, n_att, att));
        *bytes += (long long)(n_maps * (o->maps_fp32 ? sizeof(float) : sizeof(uint16_t)));
        double t2 = ae_now_seconds();
        bb->t_maps += t2 - t1;
        if (want_values) {
            hsize_t s4[4] = {(hsize_t)b0, 0, 0, 0}, n4[4] = {(hsize_t)nb_seq, (hsize_t)L, (hsize_t)H, (hsize_t)T};
            H5_TRY(dset_write_slab(dnorm, par->dxpl, active, H5T_NATIVE_FLOAT, 4, s4, n4, bb->norm));
            H5_TRY(dset_write_slab(ddla, par->dxpl, active, H5T_NATIVE_FLOAT, 4, s4, n4, bb->dla));
            *bytes += (long long)(2 * (size_t)nb_seq * L * H * T * sizeof(float));
        }
        if (want_head_out) {
            if (o->contrib == ANDREA_CONTRIB_FULL) {
                hsize_t n_out[5] = {(hsize_t)nb_seq, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)C};
                H5_TRY(dset_write_slab(dout, par->dxpl, active, H5T_NATIVE_FLOAT, 5, s5, n_out, bb->head_out));
                *bytes += (long long)((size_t)nb_seq * L * H * T * C * sizeof(float));
            } else {
                /* only the chosen heads' chunks exist in the file (MPI: every rank makes the
                 * calls of a full batch, those past its sequences selecting nothing) */
                const int nb_calls = andrea_mpi_parallel() ? B : nb_seq;
                for (int b = 0; b < nb_calls; b++)
                    for (int lh = 0; lh < L * H; lh++) {
                        if (!o->heads[lh]) continue;
                        hsize_t st[5] = {(hsize_t)(b0 + b), (hsize_t)(lh / H), (hsize_t)(lh % H), 0, 0};
                        H5_TRY(dset_write_slab(dout, par->dxpl, b < nb_seq, H5T_NATIVE_FLOAT, 5, st, c_out,
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

/* ---- the whole dump ---- */

/* Bytes of per-batch buffers for one sequence of T tokens. */
static int per_seq_bytes(const andrea_config *c, int T, const andrea_dump_options *o, size_t *out) {
    size_t L = (size_t)c->n_layer, H = (size_t)c->n_head, C = (size_t)c->d_model, t = (size_t)T, maps, vals, outs;
    if (ae_mul(L * H, t * t, &maps)) return -1;
    vals = L * H * t;
    outs = 0;
    if ((o->contrib == ANDREA_CONTRIB_FULL || o->heads) && ae_mul(vals, C, &outs)) return -1;
    size_t floats = maps + 2 * vals + outs, total;
    if (ae_mul(floats, sizeof(float), &total) || ae_add(total, maps * sizeof(uint16_t) + (t + 1) * sizeof(int), &total))
        return -1;
    *out = total;
    return 0;
}

/* GPU bytes one sequence of T tokens takes in a CUDA dump, generously: the streaming pipeline's
 * two slots of maps, norms and DLA, and the engine's activations (residual, QKV, attention output,
 * MLP hidden, per-head W_O contributions of a layer: about (16 + H) x T x C floats). */
static int per_seq_device_bytes(const andrea_config *c, int T, const andrea_dump_options *o, size_t *out) {
    size_t lh = (size_t)c->n_layer * (size_t)c->n_head, t = (size_t)T, C = (size_t)c->d_model, maps, acts;
    if (ae_mul(lh, t * t * (o->maps_fp32 ? 4 : 2), &maps) || ae_mul(t * C * 4, 16 + (size_t)c->n_head, &acts))
        return -1;
    size_t total = 2 * maps + 16 * lh * t + acts;
    if (total < maps) return -1;
    *out = total ? total : 1;
    return 0;
}

static void *alloc_n(size_t n, size_t elem, int *bad) {
    size_t bytes;
    if (*bad || ae_mul(n ? n : 1, elem, &bytes)) {
        *bad = 1;
        return NULL;
    }
    void *p = malloc(bytes);
    if (!p) *bad = 1;
    return p;
}

/* The checkpoint's sha256 (0.5 s for a 500 MB checkpoint) computed on a thread while the engine
 * opens (CUDA: context, weights, pinned buffers: 0.4-3 s), in a serial run; MPI ranks keep the
 * sequential order (rank 0 hashes, then broadcasts). */
typedef struct {
    const andrea_model *m;
    char hex[65];
    ae_error err;
    int rc;
    double seconds;
} hash_job;

static void *hash_job_run(void *arg) {
    hash_job *j = arg;
    double t0 = ae_now_seconds();
    j->rc = andrea_checkpoint_sha256(j->m, j->hex, &j->err);
    j->seconds = ae_now_seconds() - t0;
    return NULL;
}

int andrea_dump_write(const andrea_model *m, const probe_suite *suites, int n_suites, const andrea_dump_options *o,
                      ae_error *err) {
    const char *h5_path = o->out_path;
    int vrc = 0;
    if (!h5_path || !*h5_path) vrc = ae_fail(err, "dump: no output path");
    else if (o->contrib < ANDREA_CONTRIB_NONE || o->contrib > ANDREA_CONTRIB_FULL)
        vrc = ae_fail(err, "%s: contrib must be none, norm or full", h5_path);
    else if (o->gzip < 0 || o->gzip > 9) vrc = ae_fail(err, "%s: gzip level %d outside 0..9", h5_path, o->gzip);
    else vrc = check_suites(m, suites, n_suites, err);
    if (andrea_mpi_agree(vrc, err)) return -1; /* MPI: a bad input on any rank stops all */
    double t0 = ae_now_seconds();

    char sha[65] = "";
    int src = 0;
    double t_hash = 0;
    /* serial: hashed on a thread during the engine open below */
    const int hash_later = !o->checkpoint_sha256 && strncmp(m->path, "random:", 7) != 0 && !andrea_mpi_parallel();
    if (o->checkpoint_sha256) {
        snprintf(sha, sizeof sha, "%s", o->checkpoint_sha256);
    } else if (!hash_later && strncmp(m->path, "random:", 7) != 0 && andrea_mpi_rank() == 0) {
        src = andrea_checkpoint_sha256(m, sha, err); /* MPI: rank 0 hashes, the others are told */
        t_hash = ae_now_seconds() - t0;
    }
    if (andrea_mpi_agree(src, err) || andrea_mpi_bcast(sha, sizeof sha, 0, err)) return -1;

    int max_T = 0;
    long long total_seq = 0;
    for (int i = 0; i < n_suites; i++) {
        if (suites[i].max_len > max_T) max_T = suites[i].max_len;
        total_seq += suites[i].n_items;
    }
    size_t per_seq;
    if (per_seq_bytes(&m->cfg, max_T, o, &per_seq))
        return ae_fail(err, "%s: buffers for one sequence of %d tokens overflow", h5_path, max_T);
    int B = o->batch;
    if (B <= 0) {
        size_t budget = o->mem_budget ? o->mem_budget : DEFAULT_BUDGET;
        size_t fit = budget / per_seq;
        B = fit < 1 ? 1 : fit > MAX_AUTO_BATCH ? MAX_AUTO_BATCH : (int)fit;
    }
    /* CUDA (asked for, or auto with a usable GPU): also within half the GPU's free memory, the
     * other half left to the engine's weights' neighbours, cuBLAS workspaces and other processes */
    size_t gpu_free, per_dev;
    if (o->batch <= 0 && o->device != ANDREA_DEVICE_CPU && andrea_cuda_free_memory(&gpu_free) == 0 &&
        per_seq_device_bytes(&m->cfg, max_T, o, &per_dev) == 0 && gpu_free / 2 / per_dev < (size_t)B)
        B = gpu_free / 2 / per_dev < 1 ? 1 : (int)(gpu_free / 2 / per_dev);
    long long most_items = 0;
    for (int i = 0; i < n_suites; i++) most_items = suites[i].n_items > most_items ? suites[i].n_items : most_items;
    if (B > most_items) B = (int)most_items;

    h5_silence();
    /* MPI: one file, named by rank 0 (the temporary name carries its pid) and told to the others. */
    char tmp[AE_PATH_MAX] = "";
    const int root = andrea_mpi_rank() == 0;
    if (andrea_mpi_agree(root ? ae_tmp_begin(o->out_path, tmp, sizeof tmp, err) : 0, err)) {
        if (root && tmp[0]) ae_tmp_abort(tmp);
        return -1;
    }
    if (andrea_mpi_bcast(tmp, sizeof tmp, 0, err)) return -1;
    andrea_engine *eng = NULL;
    hid_t f = -1, f16 = -1, fcpl = -1, fapl = H5P_DEFAULT;
    batch_bufs bb = {0};
    par_state par = {H5P_DEFAULT, 0};
    int bad = 0;
    const size_t L = (size_t)m->cfg.n_layer, H = (size_t)m->cfg.n_head, T = (size_t)max_T;
    const int want_head_out = o->contrib == ANDREA_CONTRIB_FULL || o->heads != NULL;
    bb.tokens = alloc_n((size_t)B * T, sizeof(int), &bad);
    bb.lengths = alloc_n((size_t)B, sizeof(int), &bad);
    bb.attn = alloc_n((size_t)B * L * H * T * T, sizeof(float), &bad);
    if (!o->maps_fp32) bb.attn16 = alloc_n((size_t)B * L * H * T * T, sizeof(uint16_t), &bad);
    if (o->contrib != ANDREA_CONTRIB_NONE) {
        bb.norm = alloc_n((size_t)B * L * H * T, sizeof(float), &bad);
        bb.dla = alloc_n((size_t)B * L * H * T, sizeof(float), &bad);
    }
    if (want_head_out) bb.head_out = alloc_n((size_t)B * L * H * T * (size_t)m->cfg.d_model, sizeof(float), &bad);
    int orc = 0;
    const double t_open0 = ae_now_seconds();
    hash_job hj = {m, "", {{0}}, 0, 0};
    pthread_t hash_thread;
    int hashing = hash_later && pthread_create(&hash_thread, NULL, hash_job_run, &hj) == 0;
    if (hash_later && !hashing) hash_job_run(&hj); /* no thread to be had: hash here */
    if (bad) {
        orc = ae_fail(err, "%s: cannot allocate buffers for a batch of %d sequences of %d tokens (%zu bytes each; try --batch 1)",
                      h5_path, B, max_T, per_seq);
    } else {
        eng = andrea_engine_open(m, o->device, B, max_T, err);
        if (!eng) orc = -1;
#ifdef ANDREA_HAVE_CUDA
        /* CUDA: stream (compute / copy / write overlapped) unless head_out is wanted (the
         * pipeline carries maps, norms and DLA only) or MPI shards the batches. */
        if (eng && !strcmp(andrea_engine_name(eng), "cuda") && !want_head_out && !andrea_mpi_parallel()) {
            bb.pipe = andrea_cuda_pipeline_open(eng, B, max_T, !o->maps_fp32, 1, o->contrib != ANDREA_CONTRIB_NONE,
                                                o->contrib != ANDREA_CONTRIB_NONE, err);
            if (!bb.pipe) orc = -1;
        }
#endif
    }
    if (hashing && pthread_join(hash_thread, NULL) != 0) { /* cannot happen for a joinable thread */
        hj.rc = ae_fail(&hj.err, "%s: cannot join the hashing thread", m->path);
    }
    if (hash_later) {
        t_hash = hj.seconds;
        if (hj.rc && !orc) orc = ae_fail(err, "%s", hj.err.msg);
        snprintf(sha, sizeof sha, "%s", hj.hex);
    }
    const double t_open = ae_now_seconds() - t_open0 - (hashing ? 0 : t_hash);
    /* A plain open first, for a clear "cannot create: <reason>" (HDF5's message is long). */
    if (!orc && root) {
        FILE *probe_f = fopen(tmp, "wb");
        if (!probe_f) orc = ae_fail(err, "%s: cannot create: %s", o->out_path, strerror(errno));
        else fclose(probe_f);
    }
    PAR_AGREE(orc, &par);
    /* MPI: the file's "engine" attribute must be the same on every rank: rank 0's. */
    char engine_name[16];
    snprintf(engine_name, sizeof engine_name, "%s", andrea_engine_name(eng));
    if (andrea_mpi_bcast(engine_name, sizeof engine_name, 0, err)) goto fail;
    H5_ID(fapl, andrea_dump_par_fapl());
    H5_ID(par.dxpl, andrea_dump_par_dxpl());
    /* room for the seal in front of the HDF5 data (dump.h) */
    H5_ID(fcpl, H5Pcreate(H5P_FILE_CREATE));
    H5_TRY(H5Pset_userblock(fcpl, ANDREA_DUMP_USERBLOCK));
    /* Serial: a new file (O_EXCL), never a truncated one. Why: ext4 treats "truncate to 0, then
     * write" as a file being replaced and starts writeback of ALL its dirty pages on close
     * (auto_da_alloc): H5Fclose of a 19 GB dump took 6.4 s of a 16 s dump on the H200 machine.
     * The probe file above only reserved the name. MPI: the ranks open collectively; TRUNC. */
    if (!andrea_mpi_parallel() && unlink(tmp) != 0 && errno != ENOENT) {
        ae_fail(err, "%s: cannot replace the temporary file: %s", o->out_path, strerror(errno));
        goto fail;
    }
    H5_ID(f, H5Fcreate(tmp, andrea_mpi_parallel() ? H5F_ACC_TRUNC : H5F_ACC_EXCL, fcpl, fapl));
    H5_ID(f16, make_f16_type());
    if (write_root_attrs(f, m, suites, n_suites, sha, o, engine_name, h5_path, err)) goto fail;

    /* MPI: batches of all suites in file order, sharded in write_suite; rank 0's bar counts its
     * own sequences (the other ranks are quiet: mpi_shard.c). */
    long long n_batches_all = 0, my_seq = 0;
    for (int i = 0; i < n_suites; i++) n_batches_all += (suites[i].n_items + B - 1) / B;
    for (long long i = 0, off = 0; i < n_suites; off += (suites[i].n_items + B - 1) / B, i++) {
        long long lo, hi, n = suites[i].n_items;
        andrea_shard_part(n_batches_all, off, (n + B - 1) / B, andrea_mpi_rank(), andrea_mpi_size(), &lo, &hi);
        for (long long b = lo; b < hi; b++) my_seq += n - b * B < B ? n - b * B : B;
    }
    ae_progress prog;
    ae_progress_begin(&prog, o->progress_label ? o->progress_label : "dump", (uint64_t)my_seq);
    long long bytes = 0;
    for (long long i = 0, off = 0; i < n_suites; off += (suites[i].n_items + B - 1) / B, i++) {
        if (write_suite(f, eng, m, &suites[i], B, o, f16, &bb, &prog, &bytes, &par, off, n_batches_all, h5_path, err)) {
            ae_progress_end(&prog);
            goto fail;
        }
    }
    ae_progress_end(&prog);
    H5Tclose(f16);
    f16 = -1;
    const double t_close0 = ae_now_seconds();
    herr_t closed = H5Fclose(f);
    f = -1;
    const double t_close = ae_now_seconds() - t_close0;
    H5_TRY(closed);
    andrea_dump_par_close(par.dxpl);
    andrea_dump_par_close(fapl);
    par.dxpl = fapl = H5P_DEFAULT;
    H5Pclose(fcpl);
    fcpl = -1;
    /* MPI: the totals of all ranks; these collectives also mean that every rank has closed the
     * file (H5Fclose is collective) before rank 0 renames it. */
    int64_t all_bytes = bytes;
    int crc = andrea_mpi_sum_i64(&all_bytes, 1, err);
    const double t_seal0 = ae_now_seconds();
    if (!crc && root && (crc = andrea_dump_seal(tmp, err))) ae_tmp_abort(tmp);
    const double t_seal = ae_now_seconds() - t_seal0;
    if (!crc && root) crc = ae_tmp_commit(tmp, o->out_path, err);
    if (andrea_mpi_agree(crc, err)) goto fail_closed;
    double secs = ae_now_seconds() - t0;
    (void)andrea_mpi_max_f64(&secs, NULL); /* statistics only: the file is complete */
    if (o->stats) {
        o->stats->seconds = secs;
        o->stats->sequences = total_seq;
        o->stats->bytes = all_bytes;
        o->stats->batch = B;
        snprintf(o->stats->engine, sizeof o->stats->engine, "%s", engine_name);
        o->stats->t_hash = t_hash;
        o->stats->t_open = t_open;
        o->stats->t_forward = bb.t_forward;
        o->stats->t_maps = bb.t_maps;
        o->stats->t_other = bb.t_other;
        o->stats->t_close = t_close;
        o->stats->t_seal = t_seal;
    }
    engine_and_bufs_close(eng, &bb);
    return 0;
fail:
    if (fcpl >= 0) H5Pclose(fcpl);
    /* MPI: closing is collective; after a failure the other ranks did not agree to, skip it. */
    if (!andrea_mpi_parallel() || par.agreed) {
        if (f16 >= 0) H5Tclose(f16);
        if (f >= 0) H5Fclose(f);
        andrea_dump_par_close(par.dxpl);
        andrea_dump_par_close(fapl);
    }
    if (root) ae_tmp_abort(tmp);
fail_closed:
    engine_and_bufs_close(eng, &bb);
    return -1;
}

int andrea_parse_heads(const char *spec, const andrea_config *c, unsigned char *mask, ae_error *err) {
    memset(mask, 0, (size_t)c->n_layer * (size_t)c->n_head);
    const char *p = spec;
    int n = 0;
    while (*p) {
        char *end;
        long l = strtol(p, &end, 10);
        if (end == p || *end != '.') return ae_fail(err, "--heads: '%s' is not a list of LAYER.HEAD", spec);
        p = end + 1;
        long h = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',')) return ae_fail(err, "--heads: '%s' is not a list of LAYER.HEAD", spec);
        if (l < 0 || l >= c->n_layer || h < 0 || h >= c->n_head)
            return ae_fail(err, "--heads: head %ld.%ld does not exist (layers 0..%d, heads 0..%d)", l, h,
                           c->n_layer - 1, c->n_head - 1);
        mask[l * c->n_head + h] = 1;
        n++;
        p = *end ? end + 1 : end;
    }
    if (!n) return ae_fail(err, "--heads: empty list");
    return 0;
}

/* ---- the seal ---- */

int andrea_dump_seal(const char *path, ae_error *err) {
    char hex[65], block[ANDREA_DUMP_USERBLOCK];
    if (ae_sha256_blocks(path, ANDREA_DUMP_USERBLOCK, ANDREA_DUMP_SEAL_BLOCK, hex, err)) return -1;
    FILE *f = fopen(path, "r+b");
    if (!f) return ae_fail(err, "%s: cannot open to seal: %s", path, strerror(errno));
    memset(block, 0, sizeof block);
    snprintf(block, sizeof block, "%ssha256-blocks %zu %s\n", ANDREA_DUMP_MAGIC, ANDREA_DUMP_SEAL_BLOCK, hex);
    int rc = 0;
    if (fwrite(block, 1, sizeof block, f) != sizeof block)
        rc = ae_fail(err, "%s: cannot write the seal: %s", path, strerror(errno));
    if (fclose(f) != 0 && rc == 0) rc = ae_fail(err, "%s: cannot write the seal: %s", path, strerror(errno));
    return rc;
}
