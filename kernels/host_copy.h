/* host_copy.h — a host memcpy on the OpenMP threads but one (the CUDA engine's weight upload copies each
 * chunk into pinned staging memory with it; one thread copies ~8 GB/s, a PCIe 5 DMA takes ~50).
 * Job: dst[0..n) = src[0..n), the ranges must not overlap. No failure. */
#ifndef ANDREA_HOST_COPY_H
#define ANDREA_HOST_COPY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void andrea_parallel_memcpy(void *dst, const void *src, size_t n);

#ifdef __cplusplus
}
#endif

#endif
