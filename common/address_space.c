/* address_space.c — room under an address-space limit (see address_space.h). */
#include "address_space.h"

#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* The address space mapped now (/proc/self/statm's first field), in bytes; 0 when unknown. */
static size_t mapped_now(void) {
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

int andrea_address_space_limited(void) {
    struct rlimit rl;
    return getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

int andrea_address_space_room(size_t bytes, const char *what, ae_error *err) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
    void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
        munmap(p, bytes);
        return 0;
    }
    const size_t limit = (size_t)rl.rlim_cur, used = mapped_now();
    const size_t free_now = limit > used ? limit - used : 0, want = used + bytes;
    return andrea_fail(err, "the address-space limit (ulimit -v) of %zu MiB leaves %zu MiB free beyond the %zu MiB mapped "
                            "now: %s needs %zu MiB more; raise the limit to at least %zu MiB (ulimit -v %zu) or remove it",
                       limit / ANDREA_MIB, free_now / ANDREA_MIB, used / ANDREA_MIB, what, bytes / ANDREA_MIB,
                       (want + ANDREA_MIB - 1) / ANDREA_MIB, (want + 1023) / 1024);
}
