/* circuits_cuda.h — the GPU (cuBLAS, fp64) half of the weight-based circuit scores
 * (analyzer/circuits.h has the contract and docs/scores.md the conventions).
 *
 * Job: for a model in host memory, on the current CUDA device,
 *   - comp [3, NH, NH] (kind, src, dst): ||M||_F / (||A||_F ||B||_F) for every src layer < dst
 *     layer pair (other entries are not written; NaN where a norm is 0), in the Gram form of
 *     analyzer/circuits.c: ||M||^2 = <S_src, D_dst>, here with every product in fp64 and no
 *     Cholesky factor (S = X^T (P X) as two fp64 GEMMs);
 *   - ov_k [NH, hd, hd] row-major: K = Or diag(gamma_f) W_E^T W_E Vr^T of each head (the CPU
 *     caller takes its eigenvalues with LAPACK, as for its own K);
 *   - prev_pos [NH]: the mean attention on the previous position from pos_rows (the
 *     LayerNorm-normalised wpe rows [pos_window, C] the caller made), summed in the CPU's order.
 * Invariants: the same float factors as the CPU (gamma folded in float, W_O rows centred in
 *   double then rounded to float), then fp64 throughout on the GPU: no TF32 (CUBLAS_DEFAULT_MATH
 *   on fp64), so the scores equal the CPU's float path within its rounding (tests compare at 1e-4);
 *   source Grams are kept for as many source layers as fit in half the free GPU memory (at least
 *   one), others recomputed: more time, never more memory.
 * Failure contract: -1 with one line "CUDA: CALL failed at FILE:LINE: reason" (or cuBLAS: ...,
 *   or "circuits: out of GPU memory ...") in err; device memory freed; outputs partly written.
 *   Every CUDA and cuBLAS call is checked except the frees of the cleanup (cudaFree, cudaFreeHost,
 *   cublasDestroy), whose failure leaves nothing to do.
 */
#ifndef ANDREA_CIRCUITS_CUDA_H
#define ANDREA_CIRCUITS_CUDA_H

#include "../common/error.h"
#include "../engine/model.h"

#ifdef __cplusplus
extern "C" {
#endif

int andrea_circuits_cuda(const andrea_model *m, int pos_window, const float *pos_rows, double *comp, double *ov_k,
                         double *prev_pos, ae_error *err);

#ifdef __cplusplus
}
#endif

#endif
