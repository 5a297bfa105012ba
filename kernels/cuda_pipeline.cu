/* cuda_pipeline.cu — streaming the instrumented forward to host memory (kernels/cuda_engine.h).
 *
 * Job: keep the GPU busy while a dump writer writes: batch k's forward runs on the engine's
 * stream, its outputs are copied to pinned host memory on a separate copy stream, and the caller
 * writes batch k-1 meanwhile. Two slots, each a set of device outputs + pinned host buffers;
 * slot k%2 is reused by batch k+2 only after batch k's copy finished (event) and the caller wrote
 * it (it calls submit again only after writing).
 * Failure contract: -1 / NULL with err filled; on failure the pipeline can still be closed.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

extern "C" {
#include "../common/error.h"
#include "../engine/forward.h"
#include "cuda_engine.h"
}
#include "cuda_check.h"

struct slot {
    void *d_attn, *h_attn;
    float *d_norm, *h_norm, *d_dla, *h_dla;
    cudaEvent_t computed, copied;
    int busy, B, T;
    long long tag;
};

struct andrea_cuda_pipeline {
    andrea_engine *e;
    const andrea_model *m;
    int max_B, max_T, fp16, want_attn, want_norm, want_dla;
    cudaStream_t copy;
    struct slot s[2];
    int next; /* slot of the next submit */
};

extern "C" void andrea_cuda_pipeline_close(andrea_cuda_pipeline *p) {
    if (!p) return;
    if (p->copy) cudaStreamSynchronize(p->copy);
    for (int i = 0; i < 2; i++) {
        struct slot *s = &p->s[i];
        if (s->d_attn) cudaFree(s->d_attn);
        if (s->d_norm) cudaFree(s->d_norm);
        if (s->d_dla) cudaFree(s->d_dla);
        if (s->h_attn) cudaFreeHost(s->h_attn);
        if (s->h_norm) cudaFreeHost(s->h_norm);
        if (s->h_dla) cudaFreeHost(s->h_dla);
        if (s->computed) cudaEventDestroy(s->computed);
        if (s->copied) cudaEventDestroy(s->copied);
    }
    if (p->copy) cudaStreamDestroy(p->copy);
    free(p);
}

extern "C" andrea_cuda_pipeline *andrea_cuda_pipeline_open(andrea_engine *e, int max_B, int max_T, int maps_fp16,
                                                           int want_attn, int want_norm, int want_dla,
                                                           ae_error *err) {
    andrea_cuda_pipeline *p = NULL;
    size_t maps = 0, stats = 0;
    if (!e || strcmp(andrea_engine_name(e), "cuda") != 0) {
        ae_fail(err, "andrea_cuda_pipeline_open: not a CUDA engine");
        return NULL;
    }
    p = (andrea_cuda_pipeline *)calloc(1, sizeof *p);
    if (!p) {
        ae_fail(err, "andrea_cuda_pipeline_open: out of memory");
        return NULL;
    }
    p->e = e;
    p->max_B = max_B;
    p->max_T = max_T;
    p->fp16 = maps_fp16;
    p->want_attn = want_attn;
    p->want_norm = want_norm;
    p->want_dla = want_dla;
    {
        const andrea_config *c = andrea_cuda_config(e);
        const size_t LH = (size_t)c->n_layer * c->n_head;
        if (__builtin_mul_overflow(LH * max_B, (size_t)max_T * max_T * (maps_fp16 ? 2 : 4), &maps) ||
            __builtin_mul_overflow(LH * max_B, (size_t)max_T * sizeof(float), &stats)) {
            ae_fail(err, "andrea_cuda_pipeline_open: buffer size for B=%d T=%d overflows", max_B, max_T);
            goto fail;
        }
    }
    CU_CHECK(cudaStreamCreateWithFlags(&p->copy, cudaStreamNonBlocking));
    for (int i = 0; i < 2; i++) {
        struct slot *s = &p->s[i];
        CU_CHECK(cudaEventCreateWithFlags(&s->computed, cudaEventDisableTiming));
        CU_CHECK(cudaEventCreateWithFlags(&s->copied, cudaEventDisableTiming));
        if (want_attn) {
            CU_CHECK(cudaMalloc(&s->d_attn, maps));
            CU_CHECK(cudaHostAlloc(&s->h_attn, maps, cudaHostAllocDefault));
        }
        if (want_norm) {
            CU_CHECK(cudaMalloc((void **)&s->d_norm, stats));
            CU_CHECK(cudaHostAlloc((void **)&s->h_norm, stats, cudaHostAllocDefault));
        }
        if (want_dla) {
            CU_CHECK(cudaMalloc((void **)&s->d_dla, stats));
            CU_CHECK(cudaHostAlloc((void **)&s->h_dla, stats, cudaHostAllocDefault));
        }
    }
    return p;
fail:
    andrea_cuda_pipeline_close(p);
    return NULL;
}

/* waits for slot i's copy and describes it in *r */
static int hand_back(andrea_cuda_pipeline *p, int i, andrea_cuda_ready *r, ae_error *err) {
    struct slot *s = &p->s[i];
    memset(r, 0, sizeof *r);
    if (!s->busy) return 0;
    CU_CHECK(cudaEventSynchronize(s->copied));
    s->busy = 0;
    r->valid = 1;
    r->B = s->B;
    r->T = s->T;
    r->tag = s->tag;
    r->attn = s->h_attn;
    r->head_out_norm = s->h_norm;
    r->head_dla = s->h_dla;
    return 0;
fail:
    return -1;
}

extern "C" int andrea_cuda_pipeline_submit(andrea_cuda_pipeline *p, const andrea_forward_io *io, long long tag,
                                           andrea_cuda_ready *ready, ae_error *err) {
    const int i = p->next, prev = 1 - p->next;
    struct slot *s = &p->s[i];
    const andrea_config *c = andrea_cuda_config(p->e);
    const size_t per = (size_t)io->B * c->n_layer * c->n_head * io->T;
    andrea_cuda_device_outputs out;
    cudaStream_t st = (cudaStream_t)andrea_cuda_stream(p->e);
    memset(ready, 0, sizeof *ready);
    if (io->B > p->max_B || io->T > p->max_T)
        return ae_fail(err, "andrea_cuda_pipeline_submit: batch B=%d T=%d beyond the pipeline's B<=%d T<=%d", io->B,
                       io->T, p->max_B, p->max_T);
    if (s->busy) { /* the caller skipped a hand-back: wait for that batch before reusing its slot */
        CU_CHECK(cudaEventSynchronize(s->copied));
        s->busy = 0;
    }
    out.attn = s->d_attn;
    out.attn_fp16 = p->fp16;
    out.head_out_norm = s->d_norm;
    out.head_dla = s->d_dla;
    out.logits = NULL;
    if (andrea_cuda_forward_device(p->e, io, &out, err)) return -1;
    CU_CHECK(cudaEventRecord(s->computed, st));
    CU_CHECK(cudaStreamWaitEvent(p->copy, s->computed, 0));
    if (s->d_attn)
        CU_CHECK(cudaMemcpyAsync(s->h_attn, s->d_attn, per * io->T * (p->fp16 ? 2 : 4), cudaMemcpyDeviceToHost, p->copy));
    if (s->d_norm) CU_CHECK(cudaMemcpyAsync(s->h_norm, s->d_norm, per * 4, cudaMemcpyDeviceToHost, p->copy));
    if (s->d_dla) CU_CHECK(cudaMemcpyAsync(s->h_dla, s->d_dla, per * 4, cudaMemcpyDeviceToHost, p->copy));
    CU_CHECK(cudaEventRecord(s->copied, p->copy));
    s->busy = 1;
    s->B = io->B;
    s->T = io->T;
    s->tag = tag;
    p->next = prev;
    /* the next forward must not overwrite slot prev's device outputs before their copy is done:
     * the engine's stream waits for that copy (it is already complete when the caller has written it) */
    if (p->s[prev].busy) CU_CHECK(cudaStreamWaitEvent(st, p->s[prev].copied, 0));
    return hand_back(p, prev, ready, err);
fail:
    return -1;
}

extern "C" int andrea_cuda_pipeline_flush(andrea_cuda_pipeline *p, andrea_cuda_ready *ready, ae_error *err) {
    /* the only slot possibly busy is the last submitted, 1 - next */
    return hand_back(p, 1 - p->next, ready, err);
}
