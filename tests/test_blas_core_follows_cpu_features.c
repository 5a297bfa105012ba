/* test_blas_core_follows_cpu_features.c — OpenBLAS runs kernels for this CPU's vector units, not
 * its generic ones, when the CPU model is hidden (engine/blas_core.c), and the user's
 * OPENBLAS_CORETYPE still wins.
 * Without the re-selection a VM with a hidden CPU model runs "Prescott" (SSE3) kernels even with
 * AVX-512. The user's choice is checked in a child process started with OPENBLAS_CORETYPE=Prescott
 * (OpenBLAS reads it when the library starts). Skips without an x86 CPU with AVX2 + FMA or with a
 * BLAS that is not a DYNAMIC_ARCH OpenBLAS (nothing to choose then). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "check.h"
#include "engine/blas_core.h"

static int has_avx512(void) {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl");
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--print-core")) { /* the child: report the kernels and exit */
        printf("%s %s\n", andrea_blas_core_name(), andrea_blas_core_forced() ? andrea_blas_core_forced() : "-");
        return 0;
    }
#if !defined(__x86_64__)
    return check_skip("not an x86-64 CPU");
#else
    __builtin_cpu_init();
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return check_skip("CPU without AVX2 + FMA");
    const char *name = andrea_blas_core_name();
    if (getenv("OPENBLAS_CORETYPE")) return check_skip("OPENBLAS_CORETYPE is set in the test's environment");
    if (!andrea_blas_core_forced() && !strcmp(name, "unknown (not OpenBLAS)"))
        return check_skip("the BLAS is not OpenBLAS");
    if (!andrea_blas_core_forced()) return check_skip("OpenBLAS is not a DYNAMIC_ARCH build (its kernels are fixed)");
    const char *want = has_avx512() ? "SkylakeX" : "Haswell";
    CHECK_MSG(!strcmp(andrea_blas_core_forced(), want), "chose %s, want %s", andrea_blas_core_forced(), want);
    CHECK_MSG(!strcasecmp(name, want), "OpenBLAS runs %s, want %s", name, want);
    CHECK_MSG(getenv("OPENBLAS_CORETYPE") == NULL, "the environment keeps OPENBLAS_CORETYPE=%s",
              getenv("OPENBLAS_CORETYPE"));

    char cmd[4200];
    snprintf(cmd, sizeof cmd, "OPENBLAS_CORETYPE=Prescott '%s' --print-core", argv[0]);
    FILE *p = popen(cmd, "r");
    char line[256] = "";
    CHECK(p != NULL);
    if (p) {
        if (!fgets(line, sizeof line, p)) line[0] = 0;
        CHECK(pclose(p) == 0);
    }
    CHECK_MSG(!strcmp(line, "Prescott -\n"), "with OPENBLAS_CORETYPE=Prescott the child printed '%s'", line);
    return check_summary("blas_core_follows_cpu_features");
#endif
}
