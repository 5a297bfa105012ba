/* model.c — sizes, allocation and sanity checks of the in-memory model (see model.h). */
#include "model.h"
#include "checkpoint_hash.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/big_alloc.h"
#include "../common/checked_size.h"
#include "../common/finite.h"

const char *const andrea_param_names[ANDREA_N_PARAM_TENSORS] = {
    "wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
    "ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb"};

/* Limits far above any real GPT-2-family model, low enough that sizes cannot overflow and a
 * hostile header cannot make us allocate terabytes before the file-length check refuses it. */
#define MAX_LAYERS 1024
#define MAX_HEADS 1024
#define MAX_DMODEL 65536
#define MAX_VOCAB (1 << 24)
#define MAX_SEQ (1 << 20)

int andrea_param_sizes(const andrea_config *c, size_t sizes[ANDREA_N_PARAM_TENSORS], size_t *total,
                       ae_error *err) {
    if (c->n_layer <= 0 || c->n_layer > MAX_LAYERS)
        return andrea_fail(err, "n_layer %d out of range 1..%d", c->n_layer, MAX_LAYERS);
    if (c->n_head <= 0 || c->n_head > MAX_HEADS)
        return andrea_fail(err, "n_head %d out of range 1..%d", c->n_head, MAX_HEADS);
    if (c->d_model <= 0 || c->d_model > MAX_DMODEL)
        return andrea_fail(err, "d_model %d out of range 1..%d", c->d_model, MAX_DMODEL);
    if (c->d_model % c->n_head != 0)
        return andrea_fail(err, "d_model %d is not divisible by n_head %d", c->d_model, c->n_head);
    if (c->vocab_size <= 0 || c->vocab_size > MAX_VOCAB)
        return andrea_fail(err, "vocab_size %d out of range 1..%d", c->vocab_size, MAX_VOCAB);
    if (c->padded_vocab_size < c->vocab_size || c->padded_vocab_size > MAX_VOCAB)
        return andrea_fail(err, "padded_vocab_size %d is smaller than vocab_size %d or too large",
                       c->padded_vocab_size, c->vocab_size);
    if (c->max_seq_len <= 0 || c->max_seq_len > MAX_SEQ)
        return andrea_fail(err, "max_seq_len %d out of range 1..%d", c->max_seq_len, MAX_SEQ);
    if (c->head_dim != c->d_model / c->n_head)
        return andrea_fail(err, "head_dim %d != d_model / n_head", c->head_dim);

    size_t L = (size_t)c->n_layer, C = (size_t)c->d_model, Vp = (size_t)c->padded_vocab_size,
           T = (size_t)c->max_seq_len;
    /* With the limits above every product fits in 64 bits; the checks keep that true if the
     * limits ever move. */
    const long long dims[ANDREA_N_PARAM_TENSORS][3] = {
        {(long long)Vp, (long long)C, 1},     {(long long)T, (long long)C, 1},
        {(long long)L, (long long)C, 1},      {(long long)L, (long long)C, 1},
        {(long long)L, 3 * (long long)C, (long long)C}, {(long long)L, 3 * (long long)C, 1},
        {(long long)L, (long long)C, (long long)C},     {(long long)L, (long long)C, 1},
        {(long long)L, (long long)C, 1},      {(long long)L, (long long)C, 1},
        {(long long)L, 4 * (long long)C, (long long)C}, {(long long)L, 4 * (long long)C, 1},
        {(long long)L, (long long)C, 4 * (long long)C}, {(long long)L, (long long)C, 1},
        {(long long)C, 1, 1},                 {(long long)C, 1, 1}};
    size_t sum = 0;
    for (int i = 0; i < ANDREA_N_PARAM_TENSORS; i++) {
        if (ae_mul_dims(dims[i], 3, &sizes[i]) || ae_add(sum, sizes[i], &sum))
            return andrea_fail(err, "parameter sizes overflow");
    }
    *total = sum;
    return 0;
}

int andrea_model_alloc(andrea_model *m, const andrea_config *cfg, ae_error *err) {
    size_t sizes[ANDREA_N_PARAM_TENSORS], total, bytes;
    if (andrea_param_sizes(cfg, sizes, &total, err)) return -1;
    if (ae_mul(total, sizeof(float), &bytes)) return andrea_fail(err, "parameter bytes overflow");
    float *mem = andrea_big_alloc(bytes);
    if (!mem) return andrea_fail(err, "cannot allocate %zu bytes for parameters", bytes);
    m->cfg = *cfg;
    m->memory = mem;
    m->n_floats = total;
    float **ptrs[ANDREA_N_PARAM_TENSORS] = {
        &m->p.wte,  &m->p.wpe,  &m->p.ln1w, &m->p.ln1b, &m->p.qkvw,    &m->p.qkvb,
        &m->p.attprojw, &m->p.attprojb, &m->p.ln2w, &m->p.ln2b, &m->p.fcw, &m->p.fcb,
        &m->p.fcprojw, &m->p.fcprojb, &m->p.lnfw, &m->p.lnfb};
    float *p = mem;
    for (int i = 0; i < ANDREA_N_PARAM_TENSORS; i++) {
        *ptrs[i] = p;
        p += sizes[i];
    }
    return 0;
}

void andrea_model_free(andrea_model *m) {
    if (!m) return;
    andrea_sha_job_free(m->sha_job);
    free(m->memory);
    memset(m, 0, sizeof *m);
}

int andrea_wte_mean(const andrea_model *m, float *out, ae_error *err) {
    const size_t C = (size_t)m->cfg.d_model;
    double *acc = calloc(C, sizeof(double));
    if (!acc) return andrea_fail(err, "%s: out of memory for the mean of wte", m->path);
    /* each thread a block of columns, summed over the rows in row order: the same bits on any
     * number of threads (ANDREA-120M's wte is 154 MB, read again for every checkpoint a series swaps in) */
    const long long n_blocks = (long long)((C + 63) / 64);
#pragma omp parallel for schedule(static)
    for (long long blk = 0; blk < n_blocks; blk++) {
        const size_t c0 = (size_t)blk * 64, c1 = c0 + 64 < C ? c0 + 64 : C;
        for (int v = 0; v < m->cfg.vocab_size; v++) { /* row by row: wte is [Vp, C] */
            const float *row = m->p.wte + (size_t)v * C;
            for (size_t i = c0; i < c1; i++) acc[i] += row[i];
        }
    }
    for (size_t i = 0; i < C; i++) out[i] = (float)(acc[i] / m->cfg.vocab_size);
    free(acc);
    return 0;
}

int andrea_model_check_finite(const andrea_model *m, ae_error *err) {
    size_t sizes[ANDREA_N_PARAM_TENSORS], total;
    if (andrea_param_sizes(&m->cfg, sizes, &total, err)) return -1;
    const float *p = m->memory;
    for (int i = 0; i < ANDREA_N_PARAM_TENSORS; i++) {
        /* wte's padding rows (vocab_size..padded_vocab_size-1) are never used: not checked */
        size_t n = i == 0 ? (size_t)m->cfg.vocab_size * (size_t)m->cfg.d_model : sizes[i];
        /* the vectorised scan first; the element loop only names the first bad value */
        for (size_t j = ae_any_nonfinite(p, n) ? 0 : n; j < n; j++) {
            if (isfinite(p[j])) continue;
            /* tensors 2..13 are stacked per layer: name the layer too */
            if (i >= 2 && i <= 13) {
                size_t per = sizes[i] / (size_t)m->cfg.n_layer;
                return andrea_fail(err, "%s: tensor %s, layer %zu, holds a non-finite value (%s at element %zu)",
                               m->path, andrea_param_names[i], j / per, isnan(p[j]) ? "NaN" : "Inf", j % per);
            }
            return andrea_fail(err, "%s: tensor %s holds a non-finite value (%s at element %zu)", m->path,
                           andrea_param_names[i], isnan(p[j]) ? "NaN" : "Inf", j);
        }
        p += sizes[i];
    }
    return 0;
}

const char *andrea_family_name(const andrea_config *c) {
    if (c->n_layer == 12 && c->n_head == 12 && c->d_model == 768) return "ANDREA-120M";
    if (c->n_layer == 6 && c->n_head == 12 && c->d_model == 384) return "ANDREA-12M";
    return NULL;
}
