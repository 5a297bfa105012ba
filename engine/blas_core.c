/* blas_core.c — picks OpenBLAS's kernels from the CPU's features at program start.
 *
 * Job: OpenBLAS (a DYNAMIC_ARCH build, as Debian ships it) chooses its kernels once, in its own
 * library constructor, from the CPU's family/model numbers. On a virtual machine that hides the
 * model (lscpu: "Intel(R) Xeon(R) Processor") it falls back to its generic SSE3 "Prescott"
 * kernels, even on a CPU with AVX-512: measured on such a VM, the CPU forward of the bundled model
 * took 2.3x as long as with OPENBLAS_CORETYPE=SkylakeX (bench/RESULTS.md, "Causal check on the CPU, OpenBLAS kernels").
 * OpenBLAS reads OPENBLAS_CORETYPE once, in its own library constructor, which runs before any
 * code of this program (a .preinit_array function is too early: glibc's own initialiser then resets
 * the environment, measured). So this file's constructor, which runs after every shared library's
 * and before main, chooses again through OpenBLAS's exported re-selection entry
 * (gotoblas_dynamic_init, which reads OPENBLAS_CORETYPE and runs the kernels' init), before any
 * BLAS call of the program:
 *   - the CPU has AVX-512 F/CD/BW/DQ/VL (and the OS saves their registers) -> "SkylakeX";
 *   - else AVX2 + FMA -> "Haswell";
 *   - else nothing (OpenBLAS's own choice stays).
 * Invariants: an OPENBLAS_CORETYPE in the environment always wins and nothing is re-selected (the
 * developer override, e.g. OPENBLAS_CORETYPE=Prescott for the old kernels); nothing is chosen on
 * a CPU without the chosen kernels' instructions, nor with an OpenBLAS that is not a DYNAMIC_ARCH
 * build (weak symbols: absent = skip), nor with another CBLAS; the process's environment is never
 * written: the re-selection call alone reads a private copy with the choice in front (andrea's own
 * settings travel in option structs, andrea_engine_options); the choice changes speed and the
 * last bits of fp32 sums, never a definition.
 * Failure contract: none; when anything is missing OpenBLAS keeps its own choice.
 * Linking: this object is pulled in by the CPU engine (forward_cpu.c calls andrea_blas_core_forced),
 * so every program that can run a CPU forward gets it.
 */
#include "blas_core.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/address_space.h"

extern char **environ; /* POSIX: the process's environment, which getenv reads */

static const char *chosen; /* what the constructor chose, NULL when it chose nothing */

#if defined(OPENBLAS_VERSION) && defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__)
/* OpenBLAS DYNAMIC_ARCH internals, exported by its shared library: the kernel table in use, and
 * the function that picks it (returns at once while gotoblas is set). */
extern void *gotoblas __attribute__((weak));
extern void gotoblas_dynamic_init(void) __attribute__((weak));

__attribute__((constructor)) static void choose_blas_core(void) {
    if (getenv("OPENBLAS_CORETYPE") || !&gotoblas || !gotoblas_dynamic_init) return;
    __builtin_cpu_init();
    const char *core = NULL;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        core = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        core = "Haswell";
    if (!core) return;
    /* gotoblas_dynamic_init takes the core only from getenv("OPENBLAS_CORETYPE"): it reads, for
     * this one call, an environment of the program's own variables with the choice in front. The
     * process's environment is never written (no setenv: a child, a later getenv and the user's
     * variables see what the program was started with). */
    size_t n = 0;
    while (environ && environ[n]) n++;
    char **env = calloc(n + 2, sizeof *env);
    if (!env) return;
    char setting[40];
    snprintf(setting, sizeof setting, "OPENBLAS_CORETYPE=%s", core);
    env[0] = setting;
    for (size_t i = 0; i < n; i++) env[i + 1] = environ[i];
    char **started_with = environ;
    environ = env;
    gotoblas = NULL;
    gotoblas_dynamic_init(); /* reads OPENBLAS_CORETYPE, sets gotoblas, runs the kernels' init */
    environ = started_with;
    free(env);
    chosen = core;
}
#endif

const char *andrea_blas_core_name(void) {
#ifdef OPENBLAS_VERSION
    return openblas_get_corename();
#else
    return "unknown (not OpenBLAS)";
#endif
}

const char *andrea_blas_core_forced(void) { return chosen; }

#ifdef OPENBLAS_VERSION
int andrea_blas_threads(void) { return openblas_get_num_threads(); }
void andrea_blas_set_threads(int n) { openblas_set_num_threads(n); }
#else
int andrea_blas_threads(void) { return 1; }
void andrea_blas_set_threads(int n) { (void)n; }
#endif

/* OpenBLAS's buffers (see blas_core.h andrea_blas_reserve). OPENBLAS_BUFFER_BYTES: BUFFER_SIZE
 * plus a page, the length of the mmap seen in blas_memory_alloc of Debian 12's x86-64 build
 * (0.3.21). Held at most RESERVE_MAX at once: OpenBLAS stops the program when asked for more
 * buffers than its table holds (NUM_BUFFERS, twice its thread count); room is still asked for all. */
#define OPENBLAS_BUFFER_BYTES ((size_t)128 << 20)
#define RESERVE_MAX 16
#ifdef OPENBLAS_VERSION
extern void *blas_memory_alloc(int procpos) __attribute__((weak));
extern void blas_memory_free(void *buffer) __attribute__((weak));
#endif
static int reserved; /* buffers mapped by an earlier call */

int andrea_blas_reserve(int n_threads, ae_error *err) {
    if (n_threads <= reserved) return 0;
    char what[96];
    snprintf(what, sizeof what, "OpenBLAS (a 128 MiB buffer for each of the %d threads of the CPU forward)", n_threads);
    if (andrea_address_space_room((size_t)(n_threads - reserved) * OPENBLAS_BUFFER_BYTES + ((size_t)32 << 20), what, err))
        return -1;
#ifdef OPENBLAS_VERSION
    const int n = n_threads < RESERVE_MAX ? n_threads : RESERVE_MAX;
    void *held[RESERVE_MAX];
    if (blas_memory_alloc && blas_memory_free) {
        for (int i = 0; i < n; i++) held[i] = blas_memory_alloc(0); /* maps what the pool lacks; room was there */
        for (int i = 0; i < n; i++) blas_memory_free(held[i]);
    }
#endif
    reserved = n_threads;
    return 0;
}
