/* cuda_pipeline.cu — streaming the instrumented forward to host memory (kernels/cuda_engine.h).
 *
 * Job: keep the GPU busy while a dump writer writes. Batch k's forward runs on the engine's
 * stream into device slot k%2 (two slots, so batch k+1 computes while batch k is drained). The
 * maps of the batch handed back go to the host in pieces through a ring of RING small pinned
 * buffers on a copy stream of their own: while the caller writes piece j, pieces j+1..j+RING-1
 * copy. Norms and DLA copy on a second stream, so the maps of batch k never queue behind the
 * forward of batch k+1.
 * Why pieces: pinning a whole batch's maps cost seconds (2 x 2.4 GB at T=1024, B=8: the engine
 * open took 3.2 s on the H200, bench/RESULTS.md); the ring is RING x PIECE_BYTES whatever the
 * batch. Norms and DLA are small and still come whole, in pinned slots.
 * Invariants: pieces are asked for in order (first = 0, then first += n); a piece's buffer is
 * reused only after the caller asked for the next piece or submitted again; device slot i is
 * overwritten only after every copy out of it finished (the compute stream waits on an event
 * recorded on the copy stream at submit).
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

#define RING 4
#define PIECE_BYTES ((size_t)64 << 20)

struct slot {
    void *d_attn;
    float *d_norm, *h_norm, *d_dla, *h_dla;
    cudaEvent_t computed, small_copied;
    int busy, B, T;
    long long tag;
};

struct piece {
    void *h;            /* pinned, cap maps */
    cudaEvent_t copied;
    size_t first, n;    /* maps of the draining batch it holds */
};

struct andrea_cuda_pipeline {
    andrea_engine *e;
    int max_B, max_T, fp16, want_attn, want_norm, want_dla;
    cudaStream_t copy, copy_small;      /* maps (the ring); norms and DLA */
    cudaEvent_t copies_done, small_done; /* recorded on each at every submit */
    struct slot s[2];
    int next; /* slot of the next submit */
    /* the ring, draining slot `drain` (-1: none) */
    struct piece ring[RING];
    size_t cap;               /* maps per piece */
    int drain, head, queued;  /* oldest queued piece, number queued */
    int ready;                /* slot of the batch handed back last (-1: none) */
    size_t limit;             /* maps of the draining batch that come to the host */
    size_t enqueued;          /* maps of the draining batch whose copy is queued */
    size_t returned_end;      /* end of the piece last returned (0: none) */
};

extern "C" void andrea_cuda_pipeline_close(andrea_cuda_pipeline *p) {
    if (!p) return;
    /* both copy streams drained before any of their sources or destinations is freed */
    if (p->copy) cudaStreamSynchronize(p->copy);
    if (p->copy_small) cudaStreamSynchronize(p->copy_small);
    for (int i = 0; i < 2; i++) {
        struct slot *s = &p->s[i];
        if (s->d_attn) cudaFree(s->d_attn);
        if (s->d_norm) cudaFree(s->d_norm);
        if (s->d_dla) cudaFree(s->d_dla);
        if (s->h_norm) cudaFreeHost(s->h_norm);
        if (s->h_dla) cudaFreeHost(s->h_dla);
        if (s->computed) cudaEventDestroy(s->computed);
        if (s->small_copied) cudaEventDestroy(s->small_copied);
    }
    for (int i = 0; i < RING; i++) {
        if (p->ring[i].h) cudaFreeHost(p->ring[i].h);
        if (p->ring[i].copied) cudaEventDestroy(p->ring[i].copied);
    }
    if (p->copies_done) cudaEventDestroy(p->copies_done);
    if (p->small_done) cudaEventDestroy(p->small_done);
    if (p->copy) cudaStreamDestroy(p->copy);
    if (p->copy_small) cudaStreamDestroy(p->copy_small);
    free(p);
}

static size_t map_bytes(const andrea_cuda_pipeline *p, int T) { return (size_t)T * T * (p->fp16 ? 2 : 4); }

extern "C" andrea_cuda_pipeline *andrea_cuda_pipeline_open(andrea_engine *e, int max_B, int max_T, int maps_fp16,
                                                           int want_attn, int want_norm, int want_dla,
                                                           ae_error *err) {
    andrea_cuda_pipeline *p = NULL;
    size_t maps = 0, stats = 0, one = 0;
    if (!e || !andrea_engine_has_gpu(e)) {
        andrea_fail(err, "andrea_cuda_pipeline_open: not a CUDA engine");
        return NULL;
    }
    p = (andrea_cuda_pipeline *)calloc(1, sizeof *p);
    if (!p) {
        andrea_fail(err, "andrea_cuda_pipeline_open: out of memory");
        return NULL;
    }
    p->e = e;
    p->max_B = max_B;
    p->max_T = max_T;
    p->fp16 = maps_fp16;
    p->want_attn = want_attn;
    p->want_norm = want_norm;
    p->want_dla = want_dla;
    p->drain = -1;
    p->ready = -1;
    {
        const andrea_config *c = andrea_cuda_config(e);
        const size_t LH = (size_t)c->n_layer * c->n_head;
        one = map_bytes(p, max_T);
        if (__builtin_mul_overflow(LH * max_B, one, &maps) ||
            __builtin_mul_overflow(LH * max_B, (size_t)max_T * sizeof(float), &stats)) {
            andrea_fail(err, "andrea_cuda_pipeline_open: buffer size for B=%d T=%d overflows", max_B, max_T);
            goto fail;
        }
    }
    p->cap = one >= PIECE_BYTES ? 1 : PIECE_BYTES / one;
    /* tests: pieces of a few maps, so that pieces span sequences and the ring wraps */
    if (andrea_cuda_piece_maps(e) > 0 && (size_t)andrea_cuda_piece_maps(e) < p->cap) p->cap = (size_t)andrea_cuda_piece_maps(e);
    CU_CHECK(cudaStreamCreateWithFlags(&p->copy, cudaStreamNonBlocking));
    CU_CHECK(cudaStreamCreateWithFlags(&p->copy_small, cudaStreamNonBlocking));
    CU_CHECK(cudaEventCreateWithFlags(&p->copies_done, cudaEventDisableTiming));
    CU_CHECK(cudaEventCreateWithFlags(&p->small_done, cudaEventDisableTiming));
    for (int i = 0; i < 2; i++) {
        struct slot *s = &p->s[i];
        CU_CHECK(cudaEventCreateWithFlags(&s->computed, cudaEventDisableTiming));
        CU_CHECK(cudaEventCreateWithFlags(&s->small_copied, cudaEventDisableTiming));
        if (want_attn) CU_CHECK(cudaMalloc(&s->d_attn, maps));
        if (want_norm) {
            CU_CHECK(cudaMalloc((void **)&s->d_norm, stats));
            CU_CHECK(cudaHostAlloc((void **)&s->h_norm, stats, cudaHostAllocDefault));
        }
        if (want_dla) {
            CU_CHECK(cudaMalloc((void **)&s->d_dla, stats));
            CU_CHECK(cudaHostAlloc((void **)&s->h_dla, stats, cudaHostAllocDefault));
        }
    }
    if (want_attn)
        for (int i = 0; i < RING; i++) {
            CU_CHECK(cudaHostAlloc(&p->ring[i].h, p->cap * one, cudaHostAllocDefault));
            CU_CHECK(cudaEventCreateWithFlags(&p->ring[i].copied, cudaEventDisableTiming));
        }
    return p;
fail:
    andrea_cuda_pipeline_close(p);
    return NULL;
}

/* Stops draining: pieces still queued finish their copies before their buffers can be reused. */
static int drain_reset(andrea_cuda_pipeline *p, ae_error *err) {
    if (p->queued) CU_CHECK(cudaStreamSynchronize(p->copy));
    p->drain = -1;
    p->head = p->queued = 0;
    p->enqueued = p->returned_end = 0;
    return 0;
fail:
    return -1;
}

/* waits for slot i's small copies, describes it in *r and makes it the batch the ring drains */
static int hand_back(andrea_cuda_pipeline *p, int i, andrea_cuda_ready *r, ae_error *err) {
    struct slot *s = &p->s[i];
    memset(r, 0, sizeof *r);
    if (drain_reset(p, err)) return -1;
    p->ready = -1;
    if (!s->busy) return 0;
    CU_CHECK(cudaEventSynchronize(s->small_copied));
    s->busy = 0;
    p->ready = i;
    p->limit = (size_t)s->B * andrea_cuda_config(p->e)->n_layer * andrea_cuda_config(p->e)->n_head;
    r->valid = 1;
    r->B = s->B;
    r->T = s->T;
    r->tag = s->tag;
    r->attn = NULL; /* maps come piece by piece: andrea_cuda_pipeline_maps */
    r->head_out_norm = s->h_norm;
    r->head_dla = s->h_dla;
    if (s->d_attn) { /* its pieces copy once its forward is done */
        CU_CHECK(cudaStreamWaitEvent(p->copy, s->computed, 0));
        p->drain = i;
    }
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
        return andrea_fail(err, "andrea_cuda_pipeline_submit: batch B=%d T=%d beyond the pipeline's B<=%d T<=%d", io->B,
                       io->T, p->max_B, p->max_T);
    /* slot i last held batch k-2 (drained by the caller, or abandoned): every copy out of it must
     * be over before the forward writes there */
    if (drain_reset(p, err)) return -1;
    CU_CHECK(cudaEventRecord(p->copies_done, p->copy));
    CU_CHECK(cudaEventRecord(p->small_done, p->copy_small));
    CU_CHECK(cudaStreamWaitEvent(st, p->copies_done, 0));
    CU_CHECK(cudaStreamWaitEvent(st, p->small_done, 0));
    s->busy = 0;
    out.attn = s->d_attn;
    out.attn_fp16 = p->fp16;
    out.head_out_norm = s->d_norm;
    out.head_dla = s->d_dla;
    out.logits = NULL;
    if (andrea_cuda_forward_device(p->e, io, &out, err)) return -1;
    CU_CHECK(cudaEventRecord(s->computed, st));
    CU_CHECK(cudaStreamWaitEvent(p->copy_small, s->computed, 0));
    if (s->d_norm) CU_CHECK(cudaMemcpyAsync(s->h_norm, s->d_norm, per * 4, cudaMemcpyDeviceToHost, p->copy_small));
    if (s->d_dla) CU_CHECK(cudaMemcpyAsync(s->h_dla, s->d_dla, per * 4, cudaMemcpyDeviceToHost, p->copy_small));
    CU_CHECK(cudaEventRecord(s->small_copied, p->copy_small));
    s->busy = 1;
    s->B = io->B;
    s->T = io->T;
    s->tag = tag;
    p->next = prev;
    return hand_back(p, prev, ready, err);
fail:
    return -1;
}

extern "C" int andrea_cuda_pipeline_flush(andrea_cuda_pipeline *p, andrea_cuda_ready *ready, ae_error *err) {
    /* the only slot possibly busy is the last submitted, 1 - next */
    return hand_back(p, 1 - p->next, ready, err);
}

extern "C" int andrea_cuda_pipeline_maps(andrea_cuda_pipeline *p, size_t first, const void **maps, size_t *n,
                                         ae_error *err) {
    *maps = NULL;
    *n = 0;
    if (p->drain < 0) return andrea_fail(err, "andrea_cuda_pipeline_maps: no batch with maps was handed back");
    const struct slot *s = &p->s[p->drain];
    const andrea_config *c = andrea_cuda_config(p->e);
    const size_t total = (size_t)s->B * c->n_layer * c->n_head, one = map_bytes(p, s->T);
    const size_t end = p->limit < total ? p->limit : total;
    if (first != p->returned_end || first >= end)
        return andrea_fail(err, "andrea_cuda_pipeline_maps: maps asked out of order (%zu; next is %zu of %zu)", first,
                       p->returned_end, end);
    if (first > 0) { /* the caller is done with the piece returned last: its buffer is free */
        p->head = (p->head + 1) % RING;
        p->queued--;
    }
    while (p->queued < RING && p->enqueued < end) {
        struct piece *q = &p->ring[(p->head + p->queued) % RING];
        q->first = p->enqueued;
        q->n = end - p->enqueued < p->cap ? end - p->enqueued : p->cap;
        CU_CHECK(cudaMemcpyAsync(q->h, (const char *)s->d_attn + q->first * one, q->n * one, cudaMemcpyDeviceToHost,
                                 p->copy));
        CU_CHECK(cudaEventRecord(q->copied, p->copy));
        p->enqueued += q->n;
        p->queued++;
    }
    {
        struct piece *q = &p->ring[p->head];
        CU_CHECK(cudaEventSynchronize(q->copied));
        *maps = q->h;
        *n = q->n;
        p->returned_end = q->first + q->n;
    }
    return 0;
fail:
    return -1;
}

extern "C" int andrea_cuda_pipeline_maps_upto(andrea_cuda_pipeline *p, size_t end, ae_error *err) {
    if (p->drain < 0) return andrea_fail(err, "andrea_cuda_pipeline_maps_upto: no batch with maps was handed back");
    if (p->returned_end > 0 || p->queued > 0)
        return andrea_fail(err, "andrea_cuda_pipeline_maps_upto: the batch's maps are already coming");
    if (end < p->limit) p->limit = end;
    return 0;
}

extern "C" int andrea_cuda_pipeline_rewind(andrea_cuda_pipeline *p, ae_error *err) {
    if (p->ready < 0) return andrea_fail(err, "andrea_cuda_pipeline_rewind: no batch was handed back");
    const struct slot *s = &p->s[p->ready];
    if (drain_reset(p, err)) return -1; /* the pieces still queued finish first */
    p->limit = (size_t)s->B * andrea_cuda_config(p->e)->n_layer * andrea_cuda_config(p->e)->n_head;
    if (s->d_attn) p->drain = p->ready; /* its forward is done: hand_back ordered the copy stream after it */
    return 0;
}

extern "C" int andrea_cuda_pipeline_device(andrea_cuda_pipeline *p, andrea_cuda_device_outputs *out, void **stream,
                                           ae_error *err) {
    memset(out, 0, sizeof *out);
    *stream = NULL;
    if (p->ready < 0) return andrea_fail(err, "andrea_cuda_pipeline_device: no batch was handed back");
    const struct slot *s = &p->s[p->ready];
    out->attn = s->d_attn;
    out->attn_fp16 = p->fp16;
    out->head_out_norm = s->d_norm;
    out->head_dla = s->d_dla;
    if (s->d_attn && p->drain != p->ready) /* cannot happen: hand_back makes a slot with maps the drained one */
        return andrea_fail(err, "andrea_cuda_pipeline_device: the batch's maps are not ordered on the copy stream");
    if (!s->d_attn) CU_CHECK(cudaStreamWaitEvent(p->copy, s->computed, 0));
    *stream = (void *)p->copy;
    return 0;
fail:
    return -1;
}
