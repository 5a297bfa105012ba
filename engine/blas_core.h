/* blas_core.h — which OpenBLAS kernels this process runs (chosen from the CPU's features at program start; see
 * blas_core.c). */
#ifndef ANDREA_BLAS_CORE_H
#define ANDREA_BLAS_CORE_H

#include "../common/error.h"

/* OpenBLAS's name for the kernels it runs ("SkylakeX", "Haswell", "Prescott", ...). */
const char *andrea_blas_core_name(void);
/* The OpenBLAS core type andrea chose from the CPU's features, or NULL when it chose none (the user's
 * OPENBLAS_CORETYPE, a CPU without AVX2, or a program without the CPU engine). */
const char *andrea_blas_core_forced(void);

/* OpenBLAS's thread count, and setting it (callers that run their own OpenMP loops of small
 * BLAS calls set 1 and restore it); other CBLAS builds: 1 and a no-op. */
int andrea_blas_threads(void);
void andrea_blas_set_threads(int n);

/* Makes OpenBLAS map, now, the buffers n_threads threads calling BLAS at once need (128 MiB each;
 * its pool keeps them), after checking there is room for them under an address-space limit
 * (common/address_space.h). OpenBLAS 0.3.21 retries a buffer it cannot map forever, so without
 * this a CPU forward whose batch took the room spun instead of failing. 0, or -1 with err:
 * "the address-space limit (ulimit -v) of N MiB leaves ...". Once per process and size. */
int andrea_blas_reserve(int n_threads, ae_error *err);

#endif
