/* hand_built.h — what the tests of hand-built models share (tests/test_hand_built_*.c).
 *
 * Job: a scratch folder per test process, `andrea analyze` of a model written into it, and the
 * catalog's answers those tests check (the labels of a class, a head's extra statistic).
 * Failure contract: NULL / -1 / NAN on failure, with the reason in the analyze log
 * (NAME.log.err in the scratch folder) or printed to stderr; the caller's CHECK reports it.
 */
#ifndef ANDREA_TEST_HAND_BUILT_H
#define ANDREA_TEST_HAND_BUILT_H

#include <stddef.h>

#include "../../engine/model.h"

/* The scratch folder (mkdtemp under /tmp): -1 when it cannot be made. */
int andrea_test_scratch_begin(void);
/* NAME inside the scratch folder (one of four rotating buffers). */
const char *andrea_test_scratch_path(const char *name);
/* Removes the scratch folder. */
void andrea_test_scratch_end(void);

/* m written as NAME.bin (fp32) and analysed into NAME-out with `--quiet --report-maps 0` and the
 * extra arguments (NULL-terminated, at most 12; NULL for none): the catalog's path (valid until
 * the next call), or NULL when either step failed. */
const char *andrea_test_analyze(const andrea_model *m, const char *name, const char *const *extra);

/* The heads labelled cls in the catalog as "L.H" words in layer, head order ("" for none);
 * -1 when the catalog could not be read. */
int andrea_test_labels_of(const char *db_path, const char *cls, char *out, size_t cap);
/* Head (layer, head)'s extra statistic for cls; NAN when it has none. */
double andrea_test_extra_of(const char *db_path, const char *cls, int layer, int head);

#endif
