/* cuda_engine.h — what the CUDA backend offers beyond engine/forward.h: outputs kept on the GPU.
 *
 * Job: let a caller that keeps working on the GPU (the benchmark; a streaming dump writer with
 * pinned host buffers and a copy stream) run the instrumented forward with its outputs written
 * straight into device buffers, enqueued on the engine's stream, without a host round trip.
 * Invariants: the engine must come from andrea_cuda_engine_open (name "cuda"); io->B <= max_B,
 * io->T <= max_T; io's host output pointers must be NULL here (outputs go to `out`).
 * Tokens, lengths and ablate are read from host memory before the call returns, so the caller may
 * reuse them at once; the device outputs are complete once andrea_cuda_synchronize returns, or
 * once work queued after this call on andrea_cuda_stream() runs (stream order).
 * Settings come in andrea_engine_options (engine/forward.h) at open: precision tf32 (default) |
 * tf32x3 | fp32 (every matmul full fp32 and the exact fp32 attention kernel, results within ~1e-6
 * of the CPU engine; tf32x3: within ~3e-5 at ~2.1x TF32's time), attention_version 1|2|3 and
 * split_qlo_regs (kept kernel versions, benchmarks). The environment variables
 * ANDREA_CUDA_PRECISION, ANDREA_CUDA_FP32=1, ANDREA_CUDA_ATTN, ANDREA_CUDA_SPLIT_QLO are developer
 * overrides read by andrea_engine_options_init only (a NULL options pointer means its defaults).
 * Failure contract: -1 with err filled ("CUDA: call failed at file:line: reason").
 */
#ifndef ANDREA_CUDA_ENGINE_H
#define ANDREA_CUDA_ENGINE_H

#include "../engine/forward.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    void *attn;            /* device [B, L, H, T, T], float or __half (attn_fp16), or NULL */
    int attn_fp16;
    float *head_out_norm;  /* device [B, L, H, T] or NULL */
    float *head_dla;       /* device [B, L, H, T] or NULL */
    float *logits;         /* device [B, T, V] or NULL */
} andrea_cuda_device_outputs;

int andrea_cuda_forward_device(andrea_engine *e, const andrea_forward_io *io,
                               const andrea_cuda_device_outputs *out, ae_error *err);
/* Waits for everything queued on the engine's stream. */
int andrea_cuda_synchronize(andrea_engine *e, ae_error *err);
/* The engine's cudaStream_t, as void * so C callers need no CUDA headers. */
void *andrea_cuda_stream(andrea_engine *e);
/* The model's config (L, H, ... for sizing buffers). */
const andrea_config *andrea_cuda_config(const andrea_engine *e);
/* 1 when the engine runs full fp32 (precision fp32 at open), 0 for tf32 and tf32x3. */
int andrea_cuda_is_fp32(const andrea_engine *e);
/* The options' pipeline_piece_maps the engine opened with (0 = the pipeline's own piece size). */
int andrea_cuda_piece_maps(const andrea_engine *e);
/* The matmul precision the engine opened with (ANDREA_CUDA_PRECISION, the CLI's --precision):
 * "tf32", "tf32x3" (every layer matmul, Q·Kᵀ and P·V as three TF32 products of high and low
 * parts) or "fp32". */
const char *andrea_cuda_precision(const andrea_engine *e);

/* ---------- streaming: compute batch k+1 while batch k drains to the writer ----------
 * For dump writers. A pipeline owns two sets of device outputs and two copy streams.
 * andrea_cuda_pipeline_submit enqueues the forward of a batch (compute stream) and the copy of
 * its norms and DLA (small, whole, pinned), then hands back the PREVIOUS batch in *ready. The
 * maps of the batch handed back come piece by piece with andrea_cuda_pipeline_maps, through a
 * ring of small pinned buffers (kernels/cuda_pipeline.cu: a few hundred MB whatever the batch),
 * the next pieces copying while the caller writes one. _flush hands back the last batch.
 * Invariants: the caller takes all of a ready batch (norms, DLA, every piece of its maps) before
 * it calls submit or flush again; a piece stays valid until the next call. */
typedef struct andrea_cuda_pipeline andrea_cuda_pipeline;

typedef struct {
    int valid;             /* 0: nothing ready (first submit) */
    int B, T;              /* shape of this batch */
    long long tag;         /* the tag given at submit */
    const void *attn;      /* NULL: the maps come through andrea_cuda_pipeline_maps */
    const float *head_out_norm; /* pinned host [B, L, H, T] or NULL */
    const float *head_dla;      /* pinned host [B, L, H, T] or NULL */
} andrea_cuda_ready;

andrea_cuda_pipeline *andrea_cuda_pipeline_open(andrea_engine *e, int max_B, int max_T, int maps_fp16,
                                                int want_attn, int want_norm, int want_dla, ae_error *err);
/* io: tokens, lengths, ablate (host; copied before return); its output pointers must be NULL. */
int andrea_cuda_pipeline_submit(andrea_cuda_pipeline *p, const andrea_forward_io *io, long long tag,
                                andrea_cuda_ready *ready, ae_error *err);
int andrea_cuda_pipeline_flush(andrea_cuda_pipeline *p, andrea_cuda_ready *ready, ae_error *err);
/* Maps [first, first + *n) of the batch handed back last, of its B*L*H maps in [B, L, H, T, T]
 * order (fp16 as uint16 bits, or float), in pinned memory: *maps, *n >= 1. Ask with first = 0,
 * then first += *n, until B*L*H (or the end set by andrea_cuda_pipeline_maps_upto); anything else
 * is an error. */
int andrea_cuda_pipeline_maps(andrea_cuda_pipeline *p, size_t first, const void **maps, size_t *n, ae_error *err);
/* Only maps [0, end) of the batch handed back last come to the host (the sequences a host
 * consumer reads, e.g. a report's first examples); ask before its first piece. */
int andrea_cuda_pipeline_maps_upto(andrea_cuda_pipeline *p, size_t end, ae_error *err);
/* The batch handed back last is handed back again (its maps from the first piece, all of them
 * unless maps_upto says otherwise; its device outputs as they were): for a second consumer of
 * the same forward (run/: suites whose items are the same, token for token). Valid until the next
 * submit or flush. */
int andrea_cuda_pipeline_rewind(andrea_cuda_pipeline *p, ae_error *err);
/* The device outputs of the batch handed back last (attn, head_out_norm, head_dla; NULL where not
 * wanted; logits NULL) and the stream (cudaStream_t as void *) to enqueue work on them: work
 * enqueued there runs after the batch's forward, and the slot is not written by a later forward
 * before that work is done (the next submit into it waits for that stream). Valid until the next
 * submit or flush. */
int andrea_cuda_pipeline_device(andrea_cuda_pipeline *p, andrea_cuda_device_outputs *out, void **stream,
                                ae_error *err);
void andrea_cuda_pipeline_close(andrea_cuda_pipeline *p);

#ifdef __cplusplus
}
#endif

#endif
