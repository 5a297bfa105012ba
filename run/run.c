/* run.c — the run object (run.h): the suites checked, the batch chosen, buffers and engine opened,
 * every suite's batches handed to the sinks (forward_loop.c), the time accounted.
 * Buffers are sized once for B sequences of the longest suite, so peak memory does not grow with
 * the number of sequences. */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/big_alloc.h"
#include "../common/checked_size.h"
#include "../common/mpi_shard.h"
#include "run_internal.h"

#define DEFAULT_BUDGET ((size_t)512 << 20)
#define MAX_AUTO_BATCH 64

struct andrea_run {
    const andrea_model *m;
    const probe_suite *suites;
    int n_suites;
    andrea_run_options o;
    const char *what;
    int B, max_T;
    long long total_seq;
    size_t per_seq;       /* host bytes of one sequence's batch buffers */
    andrea_engine *eng;
    andrea_engine *given; /* andrea_run_give_engine's, until andrea_run_open takes or closes it */
    batch_bufs bb;
    double t_open, t_suites;
};

void andrea_run_options_init(andrea_run_options *o) {
    memset(o, 0, sizeof *o);
    andrea_engine_options_init(&o->engine);
    o->contrib = ANDREA_CONTRIB_NORM;
}

int andrea_run_agree(int rc, int *agreed, ae_error *err) {
    if (!andrea_mpi_agree(rc, err)) return 0;
    *agreed = 1;
    return -1;
}

/* Every item of every suite fits the model: ids in the vocabulary, lengths in 1..max_seq_len,
 * targets and entity spans inside the item; suite names valid and distinct. */
static int check_suites(const andrea_model *m, const probe_suite *s, int n, ae_error *err) {
    if (n < 1) return andrea_fail(err, "%s: no probe suites to dump", m->path);
    for (int i = 0; i < n; i++) {
        const char *name = s[i].name;
        if (!andrea_probe_suite_name_valid(name)) /* what the dump reader accepts (dump_read.c) */
            return andrea_fail(err, "%s: suite name '%.80s' is not 1-63 letters, digits, '_' or '-'", s[i].source, name);
        for (int j = 0; j < i; j++)
            if (!strcmp(s[j].name, name)) return andrea_fail(err, "%s: suite '%s' given twice", s[i].source, name);
        if (s[i].n_items < 1) return andrea_fail(err, "%s: suite '%s' has no items", s[i].source, name);
        for (int k = 0; k < s[i].n_items; k++) {
            const probe_item *it = &s[i].items[k];
            if (it->n_tokens < 1 || it->n_tokens > m->cfg.max_seq_len || it->n_tokens > s[i].max_len)
                return andrea_fail(err, "%s: suite '%s' item %d has %d tokens (model allows 1..%d)", s[i].source, name, k,
                                   it->n_tokens, m->cfg.max_seq_len);
            for (int t = 0; t < it->n_tokens; t++)
                if (it->tokens[t] < 0 || it->tokens[t] >= m->cfg.vocab_size)
                    return andrea_fail(err, "%s: suite '%s' item %d: token %d is %d, outside the vocabulary 0..%d",
                                       s[i].source, name, k, t, it->tokens[t], m->cfg.vocab_size - 1);
            for (int t = 0; t < it->n_targets; t++)
                if (it->targets[t].key < 0 || it->targets[t].key > it->targets[t].query ||
                    it->targets[t].query >= it->n_tokens)
                    return andrea_fail(err, "%s: suite '%s' item %d: target (%d, %d) out of range", s[i].source, name,
                                       k, it->targets[t].query, it->targets[t].key);
            for (int e = 0; e < it->n_entities; e++)
                if (it->entities[2 * e] < 0 || it->entities[2 * e] >= it->entities[2 * e + 1] ||
                    it->entities[2 * e + 1] > it->n_tokens)
                    return andrea_fail(err, "%s: suite '%s' item %d: entity span %d out of range", s[i].source, name, k, e);
        }
    }
    return 0;
}

/* Bytes of per-batch buffers for one sequence of T tokens. */
static int per_seq_bytes(const andrea_config *c, int T, const andrea_run_options *o, size_t *out) {
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

/* The batch B: o->batch, or as many sequences of the longest suite as fit in the host budget
 * (at most MAX_AUTO_BATCH) and, on a GPU, in half its free memory; never more than a suite has. */
static int choose_batch(andrea_run *r, ae_error *err) {
    const andrea_model *m = r->m;
    const andrea_run_options *o = &r->o;
    for (int i = 0; i < r->n_suites; i++) {
        if (r->suites[i].max_len > r->max_T) r->max_T = r->suites[i].max_len;
        r->total_seq += r->suites[i].n_items;
    }
    if (per_seq_bytes(&m->cfg, r->max_T, o, &r->per_seq))
        return andrea_fail(err, "%s: buffers for one sequence of %d tokens overflow", r->what, r->max_T);
    int B = o->batch;
    if (B <= 0) {
        size_t budget = o->mem_budget ? o->mem_budget : DEFAULT_BUDGET;
        size_t fit = budget / r->per_seq;
        B = fit < 1 ? 1 : fit > MAX_AUTO_BATCH ? MAX_AUTO_BATCH : (int)fit;
    }
    /* CUDA (asked for, or auto with a usable GPU): also within half the GPU's total memory once
     * the engine's fixed share is taken, the other half left to the weights, cuBLAS workspaces
     * and other processes. The total, not the free memory: the batch, and with it the last bits of
     * the results, must not follow what else is allocated (forward.h); engine_for takes a smaller
     * batch where the memory is not there. */
    size_t gpu_total, per_dev, fixed;
    const andrea_engine_options *eo = &o->engine;
    if (eo->device != ANDREA_DEVICE_CPU) (void)andrea_cuda_use_device(eo->device_index); /* that GPU's memory */
    if (o->batch <= 0 && eo->device != ANDREA_DEVICE_CPU && andrea_cuda_total_memory(&gpu_total) == 0 &&
        andrea_engine_bytes_per_seq(&m->cfg, eo, r->max_T, o->maps_fp32, &per_dev, &fixed) == 0) {
        gpu_total = gpu_total > fixed ? gpu_total - fixed : 0;
        const size_t fit = gpu_total / 2 / per_dev;
        if (fit < (size_t)B) B = fit < 1 ? 1 : (int)fit;
    }
    long long most_items = 0;
    for (int i = 0; i < r->n_suites; i++)
        most_items = r->suites[i].n_items > most_items ? r->suites[i].n_items : most_items;
    if (B > most_items) B = (int)most_items;
    r->B = r->bb.max_B = B;
    return 0;
}

andrea_run *andrea_run_new(const andrea_model *m, const probe_suite *suites, int n_suites, const andrea_run_options *o,
                           const char *what, ae_error *err) {
    if (o->contrib < ANDREA_CONTRIB_NONE || o->contrib > ANDREA_CONTRIB_FULL) {
        andrea_fail(err, "%s: contrib must be none, norm or full", what);
        return NULL;
    }
    if (check_suites(m, suites, n_suites, err)) return NULL;
    andrea_run *r = calloc(1, sizeof *r);
    if (!r) {
        andrea_fail(err, "%s: out of memory", what);
        return NULL;
    }
    r->m = m;
    r->suites = suites;
    r->n_suites = n_suites;
    r->o = *o;
    r->what = what;
    if (choose_batch(r, err)) {
        free(r);
        return NULL;
    }
    return r;
}

int andrea_run_batch(const andrea_run *r) { return r->B; }
int andrea_run_max_len(const andrea_run *r) { return r->max_T; }
long long andrea_run_sequences(const andrea_run *r) { return r->total_seq; }
andrea_engine *andrea_run_engine(const andrea_run *r) { return r->eng; }
float *andrea_run_scratch(const andrea_run *r) { return r->bb.attn; }

static void *alloc_n(size_t n, size_t elem, int *bad) {
    size_t bytes;
    if (*bad || ae_mul(n ? n : 1, elem, &bytes)) {
        *bad = 1;
        return NULL;
    }
    void *p = andrea_big_alloc(bytes);
    if (!p) *bad = 1;
    return p;
}

/* The batch buffers; 1 when one could not be had. */
static int alloc_bufs(andrea_run *r) {
    const andrea_run_options *o = &r->o;
    batch_bufs *bb = &r->bb;
    int bad = 0;
    const size_t B = (size_t)r->B, L = (size_t)r->m->cfg.n_layer, H = (size_t)r->m->cfg.n_head, T = (size_t)r->max_T;
    bb->tokens = alloc_n(B * T, sizeof(int), &bad);
    bb->lengths = alloc_n(B, sizeof(int), &bad);
    bb->attn = alloc_n(B * L * H * T * T, sizeof(float), &bad);
    if (!o->maps_fp32) bb->attn16 = alloc_n(B * L * H * T * T, sizeof(uint16_t), &bad);
    if (o->contrib != ANDREA_CONTRIB_NONE) {
        bb->norm = alloc_n(B * L * H * T, sizeof(float), &bad);
        bb->dla = alloc_n(B * L * H * T, sizeof(float), &bad);
    }
    if (o->contrib == ANDREA_CONTRIB_FULL || o->heads != NULL)
        bb->head_out = alloc_n(B * L * H * T * (size_t)r->m->cfg.d_model, sizeof(float), &bad);
    return bad;
}

void andrea_run_give_engine(andrea_run *r, andrea_engine *e) {
    andrea_engine_close(r->given);
    r->given = e;
}

/* The given engine swapped to this run's model, with room for its batch and tokens; one that
 * cannot take them (another shape, shorter sequences, no memory for the batch) is closed and a
 * new one opened. A GPU whose memory others hold (choose_batch sizes from its total): an engine
 * that cannot open with choose_batch's batch is tried with half as many sequences, down to one
 * (serial runs; the last failure is the error). */
static andrea_engine *engine_for(andrea_run *r, ae_error *err) {
    andrea_engine *g = r->given;
    r->given = NULL;
    if (g) {
        ae_error why;
        if (andrea_engine_max_len(g) >= r->max_T && !andrea_engine_swap_model(g, r->m, &why) &&
            (andrea_engine_max_batch(g) >= r->B || !andrea_engine_reserve_batch(g, r->B, &why)))
            return g;
        andrea_engine_close(g);
    }
    for (;;) {
        andrea_engine *e = andrea_engine_open(r->m, &r->o.engine, r->B, r->max_T, err);
        /* MPI ranks shard batches by B: every rank must keep the B they all chose */
        if (e || r->o.batch > 0 || r->B == 1 || r->o.engine.device == ANDREA_DEVICE_CPU || andrea_mpi_parallel())
            return e;
        r->B = (r->B + 1) / 2; /* the buffers, sized for the larger batch, hold it */
    }
}

int andrea_run_open(andrea_run *r, ae_error *err) {
    const double t0 = andrea_now_seconds();
    int rc = 0;
    if (alloc_bufs(r))
        rc = andrea_fail(err, "%s: cannot allocate buffers for a batch of %d sequences of %d tokens (%zu bytes each; %s)",
                         r->what, r->B, r->max_T, r->per_seq, r->B > 1 ? "try --batch 1" : "try a smaller --len");
    else if (!(r->eng = engine_for(r, err)))
        rc = -1;
#ifdef ANDREA_HAVE_CUDA
    /* CUDA: stream (compute / copy / write overlapped) unless head_out is wanted (the pipeline
     * carries maps, norms and DLA only) or MPI shards the batches. */
    const andrea_run_options *o = &r->o;
    const int want_head_out = o->contrib == ANDREA_CONTRIB_FULL || o->heads != NULL;
    if (!rc && andrea_engine_has_gpu(r->eng) && !want_head_out && !andrea_mpi_parallel()) {
        r->bb.pipe = andrea_cuda_pipeline_open(r->eng, r->B, r->max_T, !o->maps_fp32, 1,
                                               o->contrib != ANDREA_CONTRIB_NONE, o->contrib != ANDREA_CONTRIB_NONE, err);
        if (!r->bb.pipe) rc = -1;
    }
#endif
    r->t_open = andrea_now_seconds() - t0;
    return rc;
}

/* Whether suite b can be handed suite a's batch: a is one batch (so the buffers hold all of it
 * when it ends) and b's items are a's, token for token, at the same width. Classes that share a
 * generator stream (probes/classes.c: duplicate and copy_suppression read induction's items,
 * positional prev_token's, dormant bos's) need one forward between them. */
static int same_batch(const probe_suite *a, const probe_suite *b, int B) {
    if (a->n_items > B || a->n_items != b->n_items || a->max_len != b->max_len) return 0;
    for (int k = 0; k < a->n_items; k++)
        if (!andrea_probe_item_same_tokens(&a->items[k], &b->items[k])) return 0;
    return 1;
}

/* twin[i]: the earlier suite whose forward suite i is handed again (-1: its own forward). Serial
 * runs only: an MPI job shards every suite's batches over the ranks. */
static void find_twins(const andrea_run *r, int *twin) {
    const int serial = !andrea_mpi_parallel();
    for (int i = 0; i < r->n_suites; i++) {
        twin[i] = -1;
        for (int j = 0; j < i && serial; j++)
            if (twin[j] < 0 && same_batch(&r->suites[j], &r->suites[i], r->B)) {
                twin[i] = j;
                break;
            }
    }
}

/* Suite i into the sinks: suite_begin of each, its batches (forwarded, or a twin's replayed),
 * suite_end of each (abort instead, for the sinks begun, when the suite fails). */
static int one_suite(andrea_run *r, run_loop *lp, int i, int replay, ae_progress *prog, int *agreed, ae_error *err) {
    const andrea_batch_sink *v = lp->sinks->v;
    const int n = lp->sinks->n, B = r->B;
    lp->suite = i;
    lp->batch_off = 0;
    for (int j = 0; j < i; j++) lp->batch_off += (r->suites[j].n_items + B - 1) / B;
    int rc = 0, begun = 0;
    for (; begun < n && !rc; begun++)
        if (v[begun].suite_begin) rc = v[begun].suite_begin(v[begun].self, i, &r->suites[i], err);
    if (!rc)
        rc = replay ? andrea_run_replay(lp, &r->suites[i], &r->bb, prog, err)
                    : andrea_run_suite(lp, &r->suites[i], B, &r->bb, prog, agreed, err);
    if (rc) {
        for (int k = 0; k < begun; k++)
            if (v[k].abort) v[k].abort(v[k].self, i, err);
        return -1;
    }
    for (int k = 0; k < n && !rc; k++) {
        const double t0 = andrea_now_seconds(); /* the scorer's wait for its GPU sums counts as sink time */
        if (v[k].suite_end) rc = v[k].suite_end(v[k].self, i, err);
        if (!v[k].is_writer) r->bb.t_sinks += andrea_now_seconds() - t0;
    }
    return rc;
}

/* Every suite through the one loop (forward_loop.c) into the sinks, in file order, except that a
 * twin follows the suite whose forward it shares (batch_sink.h). */
static int each_suite(andrea_run *r, const run_loop *lp0, const andrea_batch_sink *v, int n, ae_progress *prog,
                      int *agreed, ae_error *err) {
    unsigned char *on_host = calloc((size_t)n + 1, 1);
    int *twin = malloc(sizeof(int) * (size_t)(r->n_suites > 0 ? r->n_suites : 1));
    if (!on_host || !twin) {
        free(on_host);
        free(twin);
        return andrea_fail(err, "%s: out of memory", r->what);
    }
    find_twins(r, twin);
    const run_sinks sk = {v, n, on_host};
    run_loop lp = *lp0;
    lp.sinks = &sk;
    int rc = 0;
    for (int i = 0; i < r->n_suites && !rc; i++) {
        if (twin[i] >= 0) continue; /* handed its leader's batch right after it */
        rc = one_suite(r, &lp, i, 0, prog, agreed, err);
        for (int j = i + 1; j < r->n_suites && !rc; j++)
            if (twin[j] == i) rc = one_suite(r, &lp, j, 1, prog, agreed, err);
    }
    free(on_host);
    free(twin);
    return rc;
}

/* MPI: batches of all suites in file order, sharded in forward_loop.c; rank 0's bar counts its
 * own sequences (the other ranks are quiet: mpi_shard.c). */
int andrea_run_suites(andrea_run *r, const andrea_batch_sink *sinks, int n_sinks, int *agreed, ae_error *err) {
    const int B = r->B;
    long long n_batches_all = 0, my_seq = 0;
    for (int i = 0; i < r->n_suites; i++) n_batches_all += (r->suites[i].n_items + B - 1) / B;
    for (long long i = 0, off = 0; i < r->n_suites; off += (r->suites[i].n_items + B - 1) / B, i++) {
        long long lo, hi, n = r->suites[i].n_items;
        andrea_shard_part(n_batches_all, off, (n + B - 1) / B, andrea_mpi_rank(), andrea_mpi_size(), &lo, &hi);
        for (long long b = lo; b < hi; b++) my_seq += n - b * B < B ? n - b * B : B;
    }
    const double t0 = andrea_now_seconds();
    ae_progress prog;
    andrea_progress_begin(&prog, r->o.progress_label ? r->o.progress_label : "forward", (uint64_t)my_seq);
    const run_loop lp0 = {r->eng, r->m, &r->o, NULL, 0, 0, n_batches_all, r->what};
    const int rc = each_suite(r, &lp0, sinks, n_sinks, &prog, agreed, err);
    andrea_progress_end(&prog);
    r->t_suites = andrea_now_seconds() - t0;
    return rc;
}

void andrea_run_get_stats(const andrea_run *r, andrea_run_stats *st) {
    memset(st, 0, sizeof *st);
    st->batch = r->B;
    st->sequences = r->total_seq;
    st->t_open = r->t_open;
    st->t_forward = r->bb.t_forward;
    st->t_maps = r->bb.t_maps;
    st->t_other = r->bb.t_other;
    st->t_sinks = r->bb.t_sinks;
    st->t_suites = r->t_suites;
}

andrea_engine *andrea_run_take_engine(andrea_run *r) {
    andrea_engine *e = r->eng;
#ifdef ANDREA_HAVE_CUDA
    andrea_cuda_pipeline_close(r->bb.pipe); /* it uses the engine: closed before the engine changes hands */
    r->bb.pipe = NULL;
#endif
    r->eng = NULL;
    return e;
}

void andrea_run_free(andrea_run *r) {
    if (!r) return;
    batch_bufs *bb = &r->bb;
#ifdef ANDREA_HAVE_CUDA
    andrea_cuda_pipeline_close(bb->pipe); /* first: it uses the engine */
#endif
    andrea_engine_close(r->eng);
    andrea_engine_close(r->given);
    free(bb->tokens);
    free(bb->lengths);
    free(bb->attn);
    free(bb->attn16);
    free(bb->norm);
    free(bb->dla);
    free(bb->head_out);
    free(r);
}
