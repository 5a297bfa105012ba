/* check.h — the tiny test harness every C test uses.
 * CHECK records a failure with file:line and the condition, and goes on; test files end with
 * `return check_summary("name");`, which prints "N passed, N failed" and returns the exit code.
 * check_skip prints "SKIP: reason" and returns 77 (ctest's skip code). */
#ifndef ANDREA_TEST_CHECK_H
#define ANDREA_TEST_CHECK_H

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

int check_summary(const char *suite);
int check_skip(const char *reason);
/* A fresh temporary directory for this test process (created on first call). */
const char *check_tmpdir(void);

#endif
