/* dump_write.c — streams instrumented forwards into the HDF5 dump (dump_write.h, dump.h): the
 * whole job. Checks the suites, picks the batch (host budget, and on a GPU its free memory), opens
 * the engine (hashing the checkpoint on a thread meanwhile), creates the file with its root
 * attributes, has dump_write_suite.c write each suite, closes, seals, renames.
 * Buffers are sized once for B sequences of the longest suite, so peak memory does not grow with
 * the number of sequences. Everything goes to "<out>.tmp-<pid>", renamed over out_path only after
 * H5Fclose and the seal succeeded; every failure path removes the temporary file.
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
#include <limits.h>
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
#include "../engine/checkpoint.h"
#include "dump.h"
#include "dump_h5.h"
#include "dump_write_impl.h"
#include "dump_write_mpi.h"
#include "../common/mpi_shard.h"
#include "../common/printable.h"

#define DEFAULT_BUDGET ((size_t)512 << 20)
#define MAX_AUTO_BATCH 64

void andrea_dump_options_init(andrea_dump_options *o) {
    memset(o, 0, sizeof *o);
    o->device = ANDREA_DEVICE_AUTO;
    o->contrib = ANDREA_CONTRIB_NORM;
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
                            const andrea_dump_options *o, const char *engine, const char *precision,
                            const char *h5_path, ae_error *err) {
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
    H5_TRY(dw_attr_str(f, "andrea_version", ANDREA_VERSION));
    /* absolute, so that classify finds the checkpoint from any folder (docs/dump-format.md) */
    char abs_ck[PATH_MAX];
    H5_TRY(dw_attr_str(f, "checkpoint_path", m->path[0] && realpath(m->path, abs_ck) ? abs_ck : m->path));
    H5_TRY(dw_attr_str(f, "checkpoint_sha256", sha));
    H5_TRY(dw_attr_str(f, "config", cfg_json));
    H5_TRY(dw_attr_int(f, "n_layer", c->n_layer));
    H5_TRY(dw_attr_int(f, "n_head", c->n_head));
    H5_TRY(dw_attr_int(f, "d_model", c->d_model));
    H5_TRY(dw_attr_int(f, "head_dim", c->head_dim));
    H5_TRY(dw_attr_int(f, "vocab_size", c->vocab_size));
    H5_TRY(dw_attr_int(f, "padded_vocab_size", c->padded_vocab_size));
    H5_TRY(dw_attr_int(f, "max_seq_len", c->max_seq_len));
    H5_TRY(dw_attr_str(f, "maps_dtype", o->maps_fp32 ? "fp32" : "fp16"));
    H5_TRY(dw_attr_str(f, "contrib", contrib_names[o->contrib]));
    H5_TRY(dw_attr_str(f, "suites", list));
    H5_TRY(dw_attr_str(f, "engine", engine));
    H5_TRY(dw_attr_str(f, "precision", precision));
    H5_TRY(dw_attr_str(f, "tokenizer", o->tokenizer ? o->tokenizer : ""));
    char vocab_sha[65] = ""; /* the tokenizer's identity (dump_write_h5.c); "" without one */
    if (o->tok && dw_tokenizer_sha256(o->tok, c->vocab_size, vocab_sha)) H5_FAIL_("tokenizer sha256");
    H5_TRY(dw_attr_str(f, "tokenizer_vocab_sha256", vocab_sha));
    free(list);
    return 0;
fail:
    free(list);
    return -1;
}

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

/* The engine's options: the run's device and precision over the defaults. */
static andrea_engine_options engine_options(const andrea_dump_options *o) {
    andrea_engine_options eo;
    andrea_engine_options_init(&eo);
    eo.device = o->device;
    if (o->precision) snprintf(eo.precision, sizeof eo.precision, "%.7s", o->precision);
    return eo;
}

/* Whether a CUDA engine opened with o runs tf32x3. */
static int cuda_precision_is_tf32x3(const andrea_dump_options *o) {
    const andrea_engine_options eo = engine_options(o);
    return !strcmp(eo.precision, "tf32x3");
}

/* GPU bytes one sequence of T tokens takes in a CUDA dump, generously: the streaming pipeline's
 * two slots of maps, norms and DLA, and the engine's activations (residual, QKV, attention output,
 * MLP hidden, per-head W_O contributions of a layer: about (16 + H) x T x C floats; tf32x3 adds
 * the split input of a matmul, up to 12 x T x C floats: kernels/cuda_engine.cu). */
static int per_seq_device_bytes(const andrea_config *c, int T, const andrea_dump_options *o, size_t *out) {
    size_t lh = (size_t)c->n_layer * (size_t)c->n_head, t = (size_t)T, C = (size_t)c->d_model, maps, acts;
    const size_t split = cuda_precision_is_tf32x3(o) ? 12 : 0;
    if (ae_mul(lh, t * t * (o->maps_fp32 ? 4 : 2), &maps) || ae_mul(t * C * 4, 16 + split + (size_t)c->n_head, &acts))
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

/* Every suite through the one loop (forward_loop.c), handed to the writer (wr, when a file is
 * written) and the caller's sinks (o->sinks). lp0: the loop's fixed part. */
static int run_sinks(const dw_loop *lp0, const probe_suite *suites, int n_suites, int B, dw_writer *wr, hid_t f, hid_t f16,
                     batch_bufs *bb, ae_progress *prog, par_state *par, ae_error *err) {
    const andrea_dump_options *o = lp0->o;
    andrea_batch_sink *v = calloc((size_t)o->n_sinks + 1, sizeof *v);
    if (!v) return ae_fail(err, "%s: out of memory", lp0->what);
    dw_sinks sk = {v, 0, -1};
    if (wr) {
        wr->f = f, wr->f16 = f16, wr->m = lp0->m, wr->o = o, wr->par = par, wr->bb = bb;
        wr->h5_path = lp0->what, wr->suites = suites;
        sk.writer = sk.n;
        v[sk.n++] = dw_writer_sink(wr);
    }
    for (int i = 0; i < o->n_sinks; i++) v[sk.n++] = o->sinks[i];
    int rc = 0;
    dw_loop lp = *lp0;
    lp.sinks = &sk;
    for (long long i = 0, off = 0; i < n_suites && !rc; off += (suites[i].n_items + B - 1) / B, i++) {
        lp.suite = (int)i;
        lp.batch_off = off;
        int begun = 0;
        for (; begun < sk.n && !rc; begun++)
            if (v[begun].suite_begin) rc = v[begun].suite_begin(v[begun].self, (int)i, &suites[i], err);
        if (!rc) rc = dw_run_suite(&lp, &suites[i], B, bb, prog, par, err);
        if (rc) {
            if (wr && begun > sk.writer) dw_writer_abort(wr, (int)i, err);
            break;
        }
        for (int k = 0; k < sk.n && !rc; k++)
            if (v[k].suite_end) rc = v[k].suite_end(v[k].self, (int)i, err);
    }
    free(v);
    return rc;
}

int andrea_dump_write(const andrea_model *m, const probe_suite *suites, int n_suites, const andrea_dump_options *o,
                      ae_error *err) {
    /* no output path: a run for the other sinks only (andrea analyze), no file */
    const int writing = o->out_path && o->out_path[0];
    const char *h5_path = writing ? o->out_path : m->path;
    int vrc = 0;
    if (!writing && o->n_sinks <= 0) vrc = ae_fail(err, "dump: no output path");
    else if (o->contrib < ANDREA_CONTRIB_NONE || o->contrib > ANDREA_CONTRIB_FULL)
        vrc = ae_fail(err, "%s: contrib must be none, norm or full", h5_path);
    else if (o->gzip < 0 || o->gzip > 9) vrc = ae_fail(err, "%s: gzip level %d outside 0..9", h5_path, o->gzip);
    else vrc = check_suites(m, suites, n_suites, err);
    if (andrea_mpi_agree(vrc, err)) return -1; /* MPI: a bad input on any rank stops all */
    double t0 = ae_now_seconds();

    char sha[65] = "";
    int src = 0;
    double t_hash = 0;
    /* a file to hash: serially on a thread during the engine open below, under MPI here */
    const int hash_file = writing && !o->checkpoint_sha256 && strncmp(m->path, "random:", 7) != 0;
    const int hash_later = hash_file && !andrea_mpi_parallel();
    if (o->checkpoint_sha256) {
        snprintf(sha, sizeof sha, "%s", o->checkpoint_sha256);
    } else if (hash_file && !hash_later && andrea_mpi_rank() == 0) {
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
        per_seq_device_bytes(&m->cfg, max_T, o, &per_dev) == 0) {
        /* tf32x3 keeps split copies of the layer weights: 3 x 12 x L x C^2 floats, all of which
         * are in host memory already, so the product cannot overflow */
        const size_t Cw = (size_t)m->cfg.d_model,
                     split_w = cuda_precision_is_tf32x3(o) ? 3 * 12 * (size_t)m->cfg.n_layer * Cw * Cw * sizeof(float) : 0;
        gpu_free = gpu_free > split_w ? gpu_free - split_w : 0;
        const size_t fit = gpu_free / 2 / per_dev;
        if (fit < (size_t)B) B = fit < 1 ? 1 : (int)fit;
    }
    long long most_items = 0;
    for (int i = 0; i < n_suites; i++) most_items = suites[i].n_items > most_items ? suites[i].n_items : most_items;
    if (B > most_items) B = (int)most_items;

    h5_silence();
    /* MPI: one file, named by rank 0 (the temporary name carries its pid) and told to the others. */
    char tmp[AE_PATH_MAX] = "";
    const int root = andrea_mpi_rank() == 0;
    if (andrea_mpi_agree(root && writing ? ae_tmp_begin(o->out_path, tmp, sizeof tmp, err) : 0, err)) {
        if (root && tmp[0]) ae_tmp_abort(tmp);
        return -1;
    }
    if (andrea_mpi_bcast(tmp, sizeof tmp, 0, err)) return -1;
    andrea_engine *eng = NULL;
    hid_t f = -1, f16 = -1, fcpl = -1, fapl = H5P_DEFAULT;
    batch_bufs bb = {0};
    bb.max_B = B;
    dw_writer wr;
    dw_writer_init(&wr);
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
        const andrea_engine_options eo = engine_options(o);
        eng = andrea_engine_open(m, &eo, B, max_T, err);
        if (!eng) orc = -1;
#ifdef ANDREA_HAVE_CUDA
        /* CUDA: stream (compute / copy / write overlapped) unless head_out is wanted (the
         * pipeline carries maps, norms and DLA only) or MPI shards the batches. */
        if (eng && andrea_engine_has_gpu(eng) && !want_head_out && !andrea_mpi_parallel()) {
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
    if (!orc && root && writing) {
        FILE *probe_f = fopen(tmp, "wb");
        if (!probe_f) orc = ae_fail(err, "%s: cannot create: %s", o->out_path, strerror(errno));
        else fclose(probe_f);
    }
    PAR_AGREE(orc, &par);
    /* MPI: the file's "engine" attribute must be the same on every rank: rank 0's. */
    char engine_name[16], precision[8] = "fp32"; /* the matmuls' precision: CPU always fp32 */
    snprintf(engine_name, sizeof engine_name, "%s", andrea_engine_name(eng));
#ifdef ANDREA_HAVE_CUDA
    if (eng && andrea_engine_has_gpu(eng)) snprintf(precision, sizeof precision, "%s", andrea_cuda_precision(eng));
#endif
    if (andrea_mpi_bcast(engine_name, sizeof engine_name, 0, err) || andrea_mpi_bcast(precision, sizeof precision, 0, err))
        goto fail;
    double t_create0 = 0;
    if (!writing) goto run;
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
    t_create0 = ae_now_seconds();
    H5_ID(f, H5Fcreate(tmp, andrea_mpi_parallel() ? H5F_ACC_TRUNC : H5F_ACC_EXCL, fcpl, fapl));
    H5_ID(f16, dw_make_f16_type());
    if (write_root_attrs(f, m, suites, n_suites, sha, o, engine_name, precision, h5_path, err)) goto fail;
run:;

    /* MPI: batches of all suites in file order, sharded in forward_loop.c; rank 0's bar counts its
     * own sequences (the other ranks are quiet: mpi_shard.c). */
    long long n_batches_all = 0, my_seq = 0;
    for (int i = 0; i < n_suites; i++) n_batches_all += (suites[i].n_items + B - 1) / B;
    for (long long i = 0, off = 0; i < n_suites; off += (suites[i].n_items + B - 1) / B, i++) {
        long long lo, hi, n = suites[i].n_items;
        andrea_shard_part(n_batches_all, off, (n + B - 1) / B, andrea_mpi_rank(), andrea_mpi_size(), &lo, &hi);
        for (long long b = lo; b < hi; b++) my_seq += n - b * B < B ? n - b * B : B;
    }
    const double t_create = writing ? ae_now_seconds() - t_create0 : 0, t_suites0 = ae_now_seconds();
    ae_progress prog;
    ae_progress_begin(&prog, o->progress_label ? o->progress_label : "dump", (uint64_t)my_seq);
    if (run_sinks(&(dw_loop){eng, m, o, NULL, 0, 0, n_batches_all, h5_path}, suites, n_suites, B, writing ? &wr : NULL,
                  f, f16, &bb, &prog, &par, err)) {
        ae_progress_end(&prog);
        goto fail;
    }
    ae_progress_end(&prog);
    const double t_suites = ae_now_seconds() - t_suites0;
    const double t_close0 = ae_now_seconds();
    if (writing) {
        H5Tclose(f16);
        f16 = -1;
        herr_t closed = H5Fclose(f);
        f = -1;
        H5_TRY(closed);
        andrea_dump_par_close(par.dxpl);
        andrea_dump_par_close(fapl);
        par.dxpl = fapl = H5P_DEFAULT;
        H5Pclose(fcpl);
        fcpl = -1;
    }
    const double t_close = ae_now_seconds() - t_close0;
    /* MPI: the totals of all ranks; these collectives also mean that every rank has closed the
     * file (H5Fclose is collective) before rank 0 renames it. */
    int64_t all_bytes = wr.bytes;
    int crc = andrea_mpi_sum_i64(&all_bytes, 1, err);
    const double t_seal0 = ae_now_seconds();
    if (!crc && root && writing && (crc = andrea_dump_seal(tmp, err))) ae_tmp_abort(tmp);
    const double t_seal = ae_now_seconds() - t_seal0;
    if (!crc && root && writing) crc = ae_tmp_commit(tmp, o->out_path, err);
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
        o->stats->t_sinks = bb.t_sinks;
        o->stats->t_close = t_close;
        o->stats->t_seal = t_seal;
        o->stats->t_create = t_create;
        o->stats->t_suites_rest = t_suites - bb.t_forward - bb.t_maps - bb.t_other - bb.t_sinks;
        /* the hash overlaps the engine open when it ran on a thread; else it came first */
        o->stats->t_unaccounted = secs - (hashing ? 0 : t_hash) - t_open - t_create - t_suites - t_close - t_seal;
    }
    if (o->keep_engine) { /* the caller's now (the causal check runs on it) */
        *o->keep_engine = eng;
        eng = NULL;
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
    if (root && writing) ae_tmp_abort(tmp);
fail_closed:
    engine_and_bufs_close(eng, &bb);
    return -1;
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
