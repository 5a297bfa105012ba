/* check.h — the tiny test harness every C test uses.
 * CHECK records a failure with file:line and the condition, and goes on; test files end with
 * `return check_summary("name");`, which prints "N passed, N failed" and returns the exit code.
 * check_skip prints "SKIP: reason" and returns 77 (ctest's skip code). */
#ifndef ANDREA_TEST_CHECK_H
#define ANDREA_TEST_CHECK_H

#include <float.h>
#include <stdio.h>

extern int check_passed, check_failed;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            check_passed++;                                                           \
        } else {                                                                      \
            check_failed++;                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)

#define CHECK_MSG(cond, ...)                                               \
    do {                                                                   \
        if (cond) {                                                        \
            check_passed++;                                                \
        } else {                                                           \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

/* Runs one test function, printing its name. */
#define RUN(fn)                                    \
    do {                                           \
        int before_ = check_failed;                \
        fn();                                      \
        fprintf(stderr, "%s %s\n", check_failed == before_ ? "ok  " : "FAIL", #fn); \
    } while (0)

/* Rounding bounds (issue 39: the tests hold on every x86-64 CPU). Two fp32 computations of one
 * value that differ only in rounding (another BLAS kernel or blocking: OpenBLAS picks its kernels
 * per CPU, AVX-512 or AVX2; another SIMD width in the engine's own loops) differ by the rounding
 * error of each, which grows with the magnitude of the terms summed and the length of the sums:
 * never a fixed absolute number. Probabilistic rounding-error analysis (Higham & Mary, SIAM J. Sci.
 * Comput. 41(5), 2019, Thm 2.4): a sum of n products computed with unit roundoff u = FLT_EPSILON/2
 * is within lambda sqrt(n) u sum|terms| of the exact one with probability >= 1 - 2n exp(-lambda^2/2).
 * lambda = 6 (<= 3e-8 n per value), two computations: 2 * 6 sqrt(n) u = 6 sqrt(n) FLT_EPSILON.
 *   n:     the roundings along the value's chain: the lengths of the reductions it went through,
 *          added up over the layers (independent errors add in quadrature, hence sqrt of the total);
 *   scale: the magnitude of the terms (sum |terms|, or the largest |value| of what is compared).
 * A test using it prints its worst error against the bound. */
#define CHECK_FP32_TOL(n, scale) (6.0 * __builtin_sqrt((double)(n)) * FLT_EPSILON * (double)(scale))

int check_summary(const char *suite);
int check_skip(const char *reason);
/* A fresh temporary directory for this test process (created on first call). */
const char *check_tmpdir(void);

#endif
