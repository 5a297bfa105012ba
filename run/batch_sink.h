/* batch_sink.h — what the forward loop hands to its consumers, batch by batch.
 *
 * Job: one loop (run/run.h, andrea_run_suites) runs the suites through the engine (CPU, GPU
 * streaming pipeline, MPI shard) and gives every batch to the sinks that were asked for: the
 * HDF5 map writer (dump/), the head scorer (analyzer/head_scorer.h), the report-map collector
 * (reports/report_collect.h). A dump file can feed the same sinks (analyzer/classify.c), so a
 * score computed in the forward and one computed from a dump come from the same code.
 *
 * Order of calls, per suite s (in file order): suite_begin(s), then for each batch every maps
 * piece in order (first = 0, first += n, up to nb * L * H), then batch(); then suite_end(s).
 * Twins: a suite whose items are those of an earlier suite of one batch, token for token (classes
 * sharing a generator stream), comes right after that suite and is handed the same forward's
 * batch again (run.c); its calls are a suite's calls as above, its own index in b->suite.
 * Under MPI a rank gets only its shard of the batches; it may also get batches with nb = 0
 * (steps where another rank has more batches): sinks that do not write collectively ignore them.
 *
 * Shapes (row-major):
 *   tokens        [nb, T]  lengths [nb]  (sequences b0 .. b0+nb-1 of suite s)
 *   maps piece    [n, T, T]  maps first .. first+n-1 of the batch's [nb, L, H] maps, query × key,
 *                 fp32 or IEEE fp16 bits (maps_fp16) — the precision the run stores, so a dump's
 *                 scores and the forward's are computed on the same numbers; rows at padded
 *                 queries (>= length) are unspecified
 *   head_out_norm, head_dla  [nb, L, H, T] or NULL (contrib none); padded positions unspecified
 * Every pointer is valid only during the call.
 * GPU batches (the CUDA streaming pipeline): a sink with device_batch gets the batch's device
 * outputs (andrea_device_batch) and works on them where they are; returning 0 it has taken the
 * batch, and its maps callback is not called for it (batch() still is, with the host norms and
 * DLA). Returning 1 it declines (e.g. out of GPU memory): it gets host pieces as any other sink.
 * Maps come to the host only for the sinks without device_batch (or declining), and only up to
 * the last sequence one of them wants (wants_host_maps; NULL = every sequence): then the pieces
 * cover maps [0, n_host) of the batch, n_host <= nb * L * H, and a sink reads only the
 * sequences it wants. With no such sink, no map leaves the GPU.
 * Failure contract: a callback returns -1 with err filled ("FILE: problem"); the loop stops at
 * once and the run fails (no partial output, dump_write.h). When a suite fails after a sink's
 * suite_begin, that sink's abort (if any) is called for the suite instead of its suite_end.
 */
#ifndef ANDREA_BATCH_SINK_H
#define ANDREA_BATCH_SINK_H

#include <stddef.h>

#include "../common/error.h"
#include "../probes/probe.h"

typedef struct {
    int suite;                  /* index in the run's suites */
    const probe_suite *s;
    int b0, nb;                 /* sequences [b0, b0 + nb) of the suite (nb may be 0 under MPI) */
    int L, H, T, C;
    const int *tokens;          /* [nb, T] */
    const int *lengths;         /* [nb] */
    int maps_fp16;              /* maps pieces are uint16 IEEE half bits, else float */
    int maps_padding_zeroed;    /* 1: padded query rows of the pieces are zeros already */
    const float *head_out_norm; /* [nb, L, H, T] or NULL */
    const float *head_dla;      /* [nb, L, H, T] or NULL */
    const float *head_out;      /* [nb, L, H, T, C] or NULL (asked for by the writer only) */
} andrea_batch;

/* A GPU batch's outputs in device memory (same shapes as andrea_batch's host ones). */
typedef struct {
    const void *attn;           /* device [nb, L, H, T, T], fp16 bits (maps_fp16) or float */
    const float *head_out_norm; /* device [nb, L, H, T] or NULL */
    const float *head_dla;      /* device [nb, L, H, T] or NULL */
    void *stream;               /* cudaStream_t: work enqueued on it runs after the forward of the
                                 * batch and before its buffers are reused */
} andrea_device_batch;

typedef struct {
    void *self;
    int (*suite_begin)(void *self, int suite, const probe_suite *s, ae_error *err);    /* or NULL */
    int (*maps)(void *self, const andrea_batch *b, size_t first, size_t n, const void *piece,
                ae_error *err);                                                      /* or NULL */
    int (*batch)(void *self, const andrea_batch *b, ae_error *err);                   /* or NULL */
    int (*suite_end)(void *self, int suite, ae_error *err);                           /* or NULL */
    int (*device_batch)(void *self, const andrea_batch *b, const andrea_device_batch *d,
                        ae_error *err);                                              /* or NULL */
    int (*wants_host_maps)(void *self, const andrea_batch *b, int seq);               /* or NULL */
    int (*abort)(void *self, int suite, ae_error *err);                               /* or NULL */
    int is_writer;  /* 1: its time counts as the run's writes (andrea_run_stats t_maps, t_other: the
                       HDF5 writer), else as sink time (t_sinks) */
} andrea_batch_sink;

#endif
