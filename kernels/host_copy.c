/* host_copy.c — andrea_parallel_memcpy (see host_copy.h): 1 MiB slices on all threads but one. */
#include "host_copy.h"

#include <omp.h>
#include <string.h>

void andrea_parallel_memcpy(void *dst, const void *src, size_t n) {
    const size_t slice = (size_t)1 << 20, n_slices = (n + slice - 1) / slice;
    /* one core is left to the checkpoint's sha256, which may still run (engine/checkpoint_hash.h) */
    const int n_threads = omp_get_max_threads() > 1 ? omp_get_max_threads() - 1 : 1;
#pragma omp parallel for schedule(static) num_threads(n_threads) if (n_slices > 4)
    for (long long i = 0; i < (long long)n_slices; i++) {
        const size_t off = (size_t)i * slice, len = n - off < slice ? n - off : slice;
        memcpy((char *)dst + off, (const char *)src + off, len);
    }
}
