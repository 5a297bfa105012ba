/* series_keep.c — the engine and the next checkpoint kept across a series (see series_keep.h). */
#include "series_keep.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct series_keep {
    const char *const *ckpts;
    int n;
    andrea_engine *eng;
    /* the read ahead: checkpoint `ahead` (-1: none) into next, its result in rc / err */
    int ahead, running;
    pthread_t thread;
    andrea_model next;
    int rc;
    ae_error err;
};

series_keep *andrea_series_keep_new(const char *const *ckpts, int n) {
    series_keep *k = calloc(1, sizeof *k);
    if (!k) return NULL;
    k->ckpts = ckpts;
    k->n = n;
    k->ahead = -1;
    return k;
}

static void *read_ahead(void *arg) {
    series_keep *k = arg;
    k->rc = andrea_model_load(&k->next, k->ckpts[k->ahead], &k->err);
    return NULL;
}

/* Waits for the read ahead; its model (rc 0) or its error stays in k. */
static void join(series_keep *k) {
    if (!k->running) return;
    pthread_join(k->thread, NULL);
    k->running = 0;
}

static void start(series_keep *k, int i) {
    if (i >= k->n) return;
    memset(&k->next, 0, sizeof k->next);
    k->ahead = i;
    k->rc = 0;
    /* no thread to be had: the checkpoint is read in its turn instead */
    k->running = pthread_create(&k->thread, NULL, read_ahead, k) == 0;
    if (!k->running) k->ahead = -1;
}

int andrea_series_keep_model(series_keep *k, int i, andrea_model *m, ae_error *err) {
    memset(m, 0, sizeof *m);
    int rc;
    join(k);
    if (k->ahead == i) {
        rc = k->rc;
        if (rc) *err = k->err; /* a failed load leaves nothing to free */
        else *m = k->next;     /* the model struct owns heap memory only: it moves by value */
        k->ahead = -1;
    } else {
        if (k->ahead >= 0 && !k->rc) andrea_model_free(&k->next);
        k->ahead = -1;
        rc = andrea_model_load(m, k->ckpts[i], err);
    }
    if (!rc) start(k, i + 1);
    return rc;
}

andrea_engine *andrea_series_keep_take_engine(series_keep *k) {
    if (!k) return NULL;
    andrea_engine *e = k->eng;
    k->eng = NULL;
    return e;
}

void andrea_series_keep_engine(series_keep *k, andrea_engine *e) {
    /* GPU engines too: the batch and the causal check's packing are sized from the GPU's total
     * memory (forward.h), so a kept engine's allocations do not change them, and a swapped engine's
     * forwards equal a fresh one's (test_engine_swap_model); bench/gpu_series.sh compares a
     * series' catalog rows with each checkpoint's alone. */
    if (!k) {
        andrea_engine_close(e);
        return;
    }
    andrea_engine_close(k->eng);
    k->eng = e;
}

void andrea_series_keep_free(series_keep *k) {
    if (!k) return;
    join(k);
    if (k->ahead >= 0 && !k->rc) andrea_model_free(&k->next);
    andrea_engine_close(k->eng);
    free(k);
}
