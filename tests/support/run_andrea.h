/* run_andrea.h — running the andrea binary under test from a C test.
 *
 * Job: fork and exec $ANDREA_BIN (set by tests/CMakeLists.txt) with an argument list, its standard
 * output into a file and its standard error into that file's name + ".err", and return its exit
 * status, so C tests can check a command's whole behaviour (files, catalog, messages).
 * Failure contract: -1 when the child did not exit normally; 126 when its output files could not
 * be opened, 127 when the binary could not be executed.
 */
#ifndef ANDREA_TEST_RUN_ANDREA_H
#define ANDREA_TEST_RUN_ANDREA_H

/* args: NULL-terminated, at most 22 of them. */
int andrea_test_run_andrea(const char *const *args, const char *out_path);

#endif
