/* error.h — the one error convention of andrea.
 *
 * Job: carry a one-line, human-readable failure from the place it happens to the CLI.
 * Contract: a function that can fail takes `ae_error *err` last and returns 0 on success and
 * -1 on failure (or NULL for constructors), having filled err->msg with "FILE: what is wrong"
 * (no "andrea:" prefix, no trailing newline; one longer than AE_ERROR_MAX keeps its start and
 * its end, the reason, joined by "..."). Only the CLI layer prints it and chooses the exit
 * code; nothing below the CLI calls exit(). err may be NULL when the caller does not care.
 * Checks of external libraries go through the per-library macros (AE_CHECK_* in the modules
 * that use them), which report the call, source file and line.
 */
#ifndef ANDREA_ERROR_H
#define ANDREA_ERROR_H

#include <stddef.h>

#define AE_ERROR_MAX 768

/* The source file an internal failure's message names (CUDA, cuBLAS, HDF5, SQLite, MPI, PCRE2
 * calls): its name without the build machine's folders, which mean nothing to a user. */
#ifdef __FILE_NAME__
#define AE_SOURCE_FILE __FILE_NAME__
#else
#define AE_SOURCE_FILE __FILE__
#endif

typedef struct {
    char msg[AE_ERROR_MAX];
} ae_error;

/* Formats the message into err (if non-NULL) and returns -1, so callers can write
 * `return andrea_fail(err, "%s: truncated", path);`. */
int andrea_fail(ae_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefixes an existing message: "PREFIX: old message". Returns -1. */
int andrea_prefix(ae_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
