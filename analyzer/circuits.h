/* circuits.h — weight-based circuit scores: composition between heads, copying and positional
 * attention per head, from the weights alone (no forward pass). Conventions: docs/scores.md,
 * section "Circuit scores from the weights"; catalog tables and views: docs/catalog.md.
 *
 * Job: for a model in memory, compute
 *   - Q-, K- and V-composition (Elhage et al. 2021) for every (src head, dst head) with
 *     src layer < dst layer, and the mean of the same score for random Gaussian factors of the
 *     same shapes (the baseline);
 *   - per head: the OV copying score (share of eigenvalues of W_E W_OV W_U with positive real
 *     part) and prev_pos (attention mass on the previous position predicted from W_pos alone).
 * Invariants:
 *   - residual vectors are ROW vectors (x W); each head's W_Q, W_K, W_V carry its own layer's
 *     ln1 scale (gamma) folded in; LayerNorm centring and every bias are ignored;
 *   - the result is a pure function of the weights (the baseline's RNG is seeded, no threads
 *     change the order of any reduction that matters above 1e-6 relative);
 *   - comp[] is NaN for pairs that are not src layer < dst layer and where a norm is 0.
 * Failure contract: -1 with "PATH: problem" (out of memory, a LAPACK failure); out zeroed.
 */
#ifndef ANDREA_CIRCUITS_H
#define ANDREA_CIRCUITS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../engine/forward.h"
#include "../engine/model.h"

typedef enum { CIRCUIT_Q = 0, CIRCUIT_K = 1, CIRCUIT_V = 2 } circuit_kind;
#define CIRCUIT_N_KINDS 3
/* "Q", "K", "V" */
extern const char *const andrea_circuit_kind_names[CIRCUIT_N_KINDS];

#define CIRCUITS_BASELINE_SAMPLES 16
#define CIRCUITS_BASELINE_SEED 0x616e64726561ULL /* "andrea" */
#define CIRCUITS_POS_WINDOW 128                  /* query positions 0..127 (fewer if maxT is smaller) */

typedef struct {
    int n_layer, n_head, d_model, head_dim;
    int pos_window;        /* positions used by prev_pos: min(maxT, CIRCUITS_POS_WINDOW) */
    int baseline_samples;
    uint64_t baseline_seed;
    double baseline;       /* mean score of random factor pairs of the model's shapes */
    double *comp;          /* [3, NH, NH]: kind, src = l*H+h, dst = l*H+h; NaN off l_src < l_dst */
    double *copying;       /* [NH] share of eigenvalues with positive real part, in [0, 1] */
    double *prev_pos;      /* [NH] mean attention mass on key q-1, queries 1..pos_window-1 */
    int gpu;               /* 1: computed on the GPU (kernels/circuits_cuda.h, fp64 cuBLAS) */
} andrea_circuits;

int andrea_circuits_compute(const andrea_model *m, andrea_circuits *out, ae_error *err);
/* The same with the memory for source Gram matrices held to budget bytes (4 H C(C+1)/2 bytes a
 * layer; at least one layer): a smaller budget recomputes destination Grams, same scores.
 * andrea_circuits_compute uses CIRCUITS_GRAM_BUDGET (ANDREA-120M needs 156 MiB, fits whole). */
#define CIRCUITS_GRAM_BUDGET ((size_t)1 << 30)
int andrea_circuits_compute_budget(const andrea_model *m, size_t budget, andrea_circuits *out, ae_error *err);
/* The same on a device: ANDREA_DEVICE_CPU is andrea_circuits_compute; ANDREA_DEVICE_CUDA runs the
 * composition, the copying matrices and prev_pos on the GPU in fp64 (kernels/circuits_cuda.h; the
 * eigenvalues and the baseline stay on the CPU), equal to the CPU's scores within 1e-4, and is
 * refused without a GPU; ANDREA_DEVICE_AUTO picks CUDA when a GPU is present and this andrea was
 * built with CUDA, else the CPU (as `analyze --device auto`). */
int andrea_circuits_compute_on(const andrea_model *m, andrea_device device, andrea_circuits *out, ae_error *err);
void andrea_circuits_free(andrea_circuits *c);

/* The composition score of one pair and kind (NaN when not stored). */
static inline double andrea_circuits_score(const andrea_circuits *c, int kind, int src, int dst) {
    const int nh = c->n_layer * c->n_head;
    return c->comp[((size_t)kind * nh + src) * nh + dst];
}

/* The baseline alone: mean over `samples` draws of ||A B||_F / (||A||_F ||B||_F) with
 * A = U1 V1, B = U2 V2, U [C, hd], V [hd, C] iid N(0, 1) from splitmix64(seed) + Box-Muller,
 * drawn in the order U1, V1, U2, V2 (row-major) per sample. */
int andrea_circuits_baseline(int d_model, int head_dim, int samples, uint64_t seed, double *out, ae_error *err);

#endif
