/* big_alloc.h — memory for the large buffers (weights, engine scratch, a batch's maps).
 *
 * Why: the first touch of every 4 KiB page is a page fault, and a cold CPU forward of 64 x 128
 * tokens on the bundled model spent about half its time in them (75,000 faults: 0.80 s against
 * 0.40 s with transparent huge pages; bench/RESULTS.md). Blocks of 4 MiB or more are aligned to
 * 2 MiB and marked MADV_HUGEPAGE, which the kernel honours in its default THP mode ("madvise"):
 * one fault per 2 MiB. Where THP is off, the hint is refused and the memory works as malloc's.
 * Failure contract: NULL when the memory cannot be had (as malloc); free the block with free(). */
#ifndef ANDREA_BIG_ALLOC_H
#define ANDREA_BIG_ALLOC_H

#include <stddef.h>

void *andrea_big_alloc(size_t bytes);

#endif
