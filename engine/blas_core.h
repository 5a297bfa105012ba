/* blas_core.h — which OpenBLAS kernels this process runs (chosen from the CPU's features at program start; see
 * blas_core.c). */
#ifndef ANDREA_BLAS_CORE_H
#define ANDREA_BLAS_CORE_H

/* OpenBLAS's name for the kernels it runs ("SkylakeX", "Haswell", "Prescott", ...). */
const char *andrea_blas_core_name(void);
/* The OpenBLAS core type andrea chose from the CPU's features, or NULL when it chose none (the user's
 * OPENBLAS_CORETYPE, a CPU without AVX2, or a program without the CPU engine). */
const char *andrea_blas_core_forced(void);

#endif
