/* host_copy.c — andrea_parallel_memcpy (see host_copy.h): 1 MiB slices, one per thread at a time. */
#include "host_copy.h"

#include <string.h>

void andrea_parallel_memcpy(void *dst, const void *src, size_t n) {
    const size_t slice = (size_t)1 << 20, n_slices = (n + slice - 1) / slice;
#pragma omp parallel for schedule(static) if (n_slices > 4)
    for (long long i = 0; i < (long long)n_slices; i++) {
        const size_t off = (size_t)i * slice, len = n - off < slice ? n - off : slice;
        memcpy((char *)dst + off, (const char *)src + off, len);
    }
}
