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
 * build (weak symbols: absent = skip), nor with another CBLAS; the variable is set only for the
 * re-selection call and removed again, so the process's environment is as it was (andrea's own
 * settings travel in option structs, andrea_engine_options); the choice changes speed and the
 * last bits of fp32 sums, never a definition.
 * Failure contract: none; when anything is missing OpenBLAS keeps its own choice.
 * Linking: this object is pulled in by the CPU engine (forward_cpu.c calls andrea_blas_core_forced),
 * so every program that can run a CPU forward gets it.
 */
#include "blas_core.h"

#include <cblas.h>
#include <stdlib.h>

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
    if (!core || setenv("OPENBLAS_CORETYPE", core, 1) != 0) return;
    gotoblas = NULL;
    gotoblas_dynamic_init(); /* reads OPENBLAS_CORETYPE, sets gotoblas, runs the kernels' init */
    unsetenv("OPENBLAS_CORETYPE");
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
