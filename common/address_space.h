/* address_space.h — room under an address-space limit (`ulimit -v`, RLIMIT_AS), asked before
 * the calls that cannot fail cleanly when there is none.
 *
 * Job: OpenBLAS 0.3.21 (Debian 12) takes a 128 MiB buffer for each thread that runs BLAS and,
 * when the mmap and malloc of it fail, tries again forever (blas_memory_alloc): under a low
 * address-space limit andrea spun at 100 % CPU, or printed its error line and then never exited
 * (OpenBLAS's exit handler joins a worker thread still spinning). So andrea asks first, and
 * refuses with one line naming what it needs (engine/blas_core.h andrea_blas_reserve), and under
 * a limit leaves with _exit (cli/main.c).
 * Invariants: nothing is asked without a limit (RLIM_INFINITY); the probe maps PROT_NONE,
 * MAP_NORESERVE address space and unmaps it at once, touching no memory.
 * Failure contract: -1 with "the address-space limit (ulimit -v) of N MiB leaves M MiB free ...:
 * WHAT needs K MiB more; raise the limit to at least L MiB (ulimit -v KIB) or remove it". */
#ifndef ANDREA_ADDRESS_SPACE_H
#define ANDREA_ADDRESS_SPACE_H

#include <stddef.h>

#include "error.h"

#define ANDREA_MIB ((size_t)1 << 20)

/* 1 when the process runs under an address-space limit (RLIMIT_AS is not infinite). */
int andrea_address_space_limited(void);

/* 0 when `bytes` more of address space can be mapped now (or there is no limit); else -1, err
 * naming `what` needs them. */
int andrea_address_space_room(size_t bytes, const char *what, ae_error *err);

#endif
