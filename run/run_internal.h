/* run_internal.h — what run.c and forward_loop.c share (internal to run/).
 *
 * run.c is the run object (sizes, buffers, engine, stats, the loop over suites); forward_loop.c
 * runs one suite's batches through the engine into the sinks (synchronous or, on a GPU, the
 * streaming pipeline).
 */
#ifndef ANDREA_RUN_INTERNAL_H
#define ANDREA_RUN_INTERNAL_H

#include <stdint.h>

#include "../common/progress.h"
#include "run.h"
#ifdef ANDREA_HAVE_CUDA
#include "../kernels/cuda_engine.h"
#endif

typedef struct {
    /* per-batch buffers, sized for max_B sequences of max_T */
    int max_B;
    int *tokens, *lengths;
    float *attn, *head_out, *norm, *dla;
    uint16_t *attn16;
    double t_forward, t_maps, t_other, t_sinks; /* seconds spent, for andrea_run_stats */
#ifdef ANDREA_HAVE_CUDA
    andrea_cuda_pipeline *pipe; /* CUDA engine: the streaming pipeline (NULL: synchronous path) */
#endif
} batch_bufs;

/* The sinks of a suite's batches; on_host: [n] scratch, per GPU batch 1 for the sinks fed host
 * maps (no device_batch, or it declined). */
typedef struct {
    const andrea_batch_sink *v;
    int n;
    unsigned char *on_host;
} run_sinks;

/* What the loop over one suite's batches needs (forward_loop.c). */
typedef struct {
    andrea_engine *eng;
    const andrea_model *m;
    const andrea_run_options *o;
    const run_sinks *sinks;
    int suite;                  /* index of the suite in the run */
    long long batch_off;        /* MPI: its first batch in the job's n_batches_all */
    long long n_batches_all;
    const char *what;           /* name for messages: the output path, or the checkpoint */
} run_loop;

/* forward_loop.c: one suite's batches (MPI-sharded; the CUDA pipeline in bb streams when present)
 * through the engine and into every sink. */
int andrea_run_suite(const run_loop *lp, const probe_suite *s, int B, batch_bufs *bb, ae_progress *prog, int *agreed,
                     ae_error *err);

/* forward_loop.c: the batch the buffers (or the CUDA pipeline) hold, the whole of an earlier
 * suite of one batch whose items are s's token for token, handed to every sink again as suite
 * lp->suite: a twin's maps without a forward of its own. */
int andrea_run_replay(const run_loop *lp, const probe_suite *s, batch_bufs *bb, ae_progress *prog, ae_error *err);

#endif
