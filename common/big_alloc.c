/* big_alloc.c — large buffers on transparent huge pages where the kernel has them (see big_alloc.h). */
#include "big_alloc.h"

#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)
#define WORTH_IT ((size_t)4 << 20) /* smaller blocks: malloc's own, no rounding up */

void *andrea_big_alloc(size_t bytes) {
    if (bytes < WORTH_IT) return malloc(bytes ? bytes : 1);
    const size_t whole = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE; /* bytes >= 4 MiB: no wrap below SIZE_MAX - 2 MiB */
    if (whole < bytes) return NULL;
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, whole) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    /* a hint: EINVAL where THP is compiled out or off; the block is good either way */
    (void)madvise(p, whole, MADV_HUGEPAGE);
#endif
    return p;
}
