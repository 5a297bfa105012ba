/* fuzz_util.h — shared by the libFuzzer targets: the parsers under test take paths, so each input
 * is written to a file in a per-process scratch folder (on /dev/shm when present) first. */
#ifndef ANDREA_FUZZ_UTIL_H
#define ANDREA_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/error.h"

/* A per-process scratch folder, created on first use. */
const char *fuzz_dir(void);
/* Writes data to fuzz_dir()/name and returns the full path (a static buffer, valid until the
 * next call). */
const char *fuzz_write(const char *name, const uint8_t *data, size_t size);
/* Splits data at the first occurrence of the 4-byte separator "\n--\n": part a before, b after. */
void fuzz_split(const uint8_t *data, size_t size, const uint8_t **a, size_t *na, const uint8_t **b,
                size_t *nb);

/* The error contract of common/error.h, checked after every refusal: a non-empty message of one
 * line (a hostile name or string from the file must not split it). Aborts otherwise. */
void fuzz_check_error(const char *target, const ae_error *err);

#endif
