/* cublas_lazy.h — cuBLAS and cuBLASLt loaded when a GPU engine first needs them, not at start-up.
 *
 * Why: linked the usual way, the dynamic loader maps and relocates libcublas and libcublasLt
 * (hundreds of MB) before main() of every command, GPU or not: `andrea --version` took 0.4-1.1 s
 * in a CUDA build (39% of the samples in libcublasLt), and each TAB completion waited that long.
 * kernels/cublas_lazy.c defines the cuBLAS functions andrea calls, with cuBLAS's own prototypes;
 * each forwards to the library's function, which the first call looks up with dlopen/dlsym. The
 * binary does not link libcublas at all (CMakeLists.txt), and the CUDA runtime is linked
 * statically (it loads the driver itself on its first call).
 * Contract: andrea_cublas_load(err) loads both libraries once (thread-safe); 0, or -1 with
 * "CUDA: cannot load libcublas.so.N: REASON" (engines call it first, so a missing library is one
 * line, not a failed call). A forwarded call whose library could not be loaded returns
 * CUBLAS_STATUS_NOT_INITIALIZED. */
#ifndef ANDREA_CUBLAS_LAZY_H
#define ANDREA_CUBLAS_LAZY_H

#include "../common/error.h"

#ifdef __cplusplus
extern "C" {
#endif

int andrea_cublas_load(ae_error *err);

#ifdef __cplusplus
}
#endif

#endif
