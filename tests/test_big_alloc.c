/* test_big_alloc.c — common/big_alloc.h: large blocks come 2 MiB-aligned (what transparent huge
 * pages need) and whole, small ones from malloc, absurd sizes as NULL; every block frees with free(). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/big_alloc.h"
#include "check.h"

static void large_blocks_are_aligned_and_whole(void) {
    const size_t sizes[] = {(size_t)4 << 20, ((size_t)4 << 20) + 1, ((size_t)37 << 20) + 4093};
    for (int i = 0; i < 3; i++) {
        unsigned char *p = andrea_big_alloc(sizes[i]);
        CHECK(p != NULL);
        if (!p) continue;
        CHECK(((uintptr_t)p & (((uintptr_t)2 << 20) - 1)) == 0);
        memset(p, 0xA5, sizes[i]); /* every byte asked for is there (ASan sees an overrun) */
        CHECK(p[0] == 0xA5 && p[sizes[i] - 1] == 0xA5);
        free(p);
    }
}

static void small_and_absurd_sizes(void) {
    void *p = andrea_big_alloc(0), *q = andrea_big_alloc(100);
    CHECK(p != NULL && q != NULL);
    free(p);
    free(q);
    CHECK(andrea_big_alloc(SIZE_MAX) == NULL);
    CHECK(andrea_big_alloc(SIZE_MAX - ((size_t)1 << 20)) == NULL); /* rounding up to 2 MiB would wrap */
}

int main(void) {
    RUN(large_blocks_are_aligned_and_whole);
    RUN(small_and_absurd_sizes);
    return check_summary("test_big_alloc");
}
