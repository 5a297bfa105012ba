/* run.h — the forward run: probe suites through the instrumented engine, batch by batch, into
 * the sinks that asked for them (batch_sink.h).
 *
 * Job: size the batch (host budget, and on a GPU its free memory), open the engine from the one
 * andrea_engine_options (and on a GPU the streaming pipeline), run every suite's batches (an MPI
 * job's batches sharded over the ranks), hand each batch to the sinks, and say where the time
 * went. Nothing here knows about files: the HDF5 writer (dump/dump_write.h) is one sink among the
 * head scorer and the report collector.
 * Invariants: memory is bounded by one batch (B sequences of the longest suite); the order of sink
 * calls is batch_sink.h's; an MPI run's ranks take the same number of steps.
 * Failure contract: -1 with err ("WHAT: problem", WHAT the name the caller gave: the output file
 * or the checkpoint). Under MPI, failures at the agreed points (bad input, the engine, a forward,
 * an interrupt) fail every rank together and set *agreed (andrea_run_suites).
 */
#ifndef ANDREA_RUN_H
#define ANDREA_RUN_H

#include <stddef.h>

#include "../common/error.h"
#include "../engine/forward.h"
#include "../engine/model.h"
#include "../probes/probe.h"
#include "batch_sink.h"

/* What the run computes per head besides the maps: none; norm (default): the norms of the heads'
 * W_O contributions and their direct logit attribution; full: also the contributions themselves. */
typedef enum { ANDREA_CONTRIB_NONE = 0, ANDREA_CONTRIB_NORM = 1, ANDREA_CONTRIB_FULL = 2 } andrea_contrib;

typedef struct {
    andrea_engine_options engine; /* how the engine opens (andrea_engine_options_init's defaults) */
    int maps_fp32;                /* 0: maps handed on as IEEE fp16 (default); 1: fp32 */
    andrea_contrib contrib;       /* default NORM */
    const unsigned char *heads;   /* [L*H] or NULL: heads whose head_out is computed without FULL */
    int batch;                    /* sequences per forward; 0 = as many as fit in mem_budget (<= 64)
                                   * and, on a GPU, in half of its free memory */
    size_t mem_budget;            /* bytes of per-batch buffers when batch == 0; 0 = 512 MiB */
    const char *progress_label;   /* progress bar label, NULL = "forward" */
} andrea_run_options;

void andrea_run_options_init(andrea_run_options *o);

/* Where the time went (seconds) and what ran. */
typedef struct {
    int batch;             /* sequences per forward */
    long long sequences;   /* of every suite (all ranks) */
    double t_open;         /* buffers, engine, pipeline */
    double t_forward;      /* CPU: compute + fp16 conversion; CUDA: waiting for the GPU pipeline */
    double t_maps, t_other; /* the writer sink's map writes, and its other calls (is_writer) */
    double t_sinks;        /* the other sinks */
    double t_suites;       /* andrea_run_suites as a whole */
} andrea_run_stats;

typedef struct andrea_run andrea_run;

/* A run of m over the suites (checked: ids < vocab_size, 1 <= n_tokens <= max_seq_len, names)
 * with the batch chosen, nothing opened yet. what names the run in messages. NULL on failure. */
andrea_run *andrea_run_new(const andrea_model *m, const probe_suite *suites, int n_suites, const andrea_run_options *o,
                           const char *what, ae_error *err);
int andrea_run_batch(const andrea_run *r);          /* sequences per forward */
int andrea_run_max_len(const andrea_run *r);        /* tokens of the longest suite */
long long andrea_run_sequences(const andrea_run *r); /* of every suite */

/* An engine of an earlier run (a series' last checkpoint), now the run's: andrea_run_open swaps it
 * to this run's model (andrea_engine_swap_model) instead of opening one, or closes it and opens
 * one when it cannot take this model, batch or length. NULL: open one. */
void andrea_run_give_engine(andrea_run *r, andrea_engine *e);
/* Buffers and engine (and on a GPU the streaming pipeline). Not agreed under MPI: the caller
 * agrees on the result. */
int andrea_run_open(andrea_run *r, ae_error *err);
andrea_engine *andrea_run_engine(const andrea_run *r);
/* [batch, L, H, T, T] floats a sink may use between its calls as scratch (the writer stages maps
 * whose padded rows need zeroing there); valid after andrea_run_open. */
float *andrea_run_scratch(const andrea_run *r);

/* Every suite through the engine into the n sinks. agreed: set to 1 when a failure was agreed by
 * every rank (MPI). */
int andrea_run_suites(andrea_run *r, const andrea_batch_sink *sinks, int n_sinks, int *agreed, ae_error *err);

void andrea_run_get_stats(const andrea_run *r, andrea_run_stats *st);
/* The engine is the caller's now (andrea_engine_close it): the causal check runs on it. */
andrea_engine *andrea_run_take_engine(andrea_run *r);
/* Closes the pipeline, the engine (unless taken) and the buffers. NULL is fine. */
void andrea_run_free(andrea_run *r);

/* MPI agreement at the run's agreed points: every rank calls it at the same point with its own
 * rc; -1 on every rank (and *agreed = 1) when any failed, else 0. Serial: rc's own result. */
int andrea_run_agree(int rc, int *agreed, ae_error *err);

#endif
