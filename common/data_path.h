/* data_path.h — where andrea's run-time data lives (the bundled model, probes/data).
 *
 * Job: find one data folder ("models", "probes/data") without a compiled-in source path, so the
 * binary works from its build tree, from an install (cmake --install, the .deb) and after the
 * source tree is gone. Looked up in this order:
 *   1. the environment variable the caller names (ANDREA_MODEL_DIR, ANDREA_PROBE_DATA) when set
 *      and non-empty: used as given (a wrong value fails later, naming the path);
 *   2. <folder of the running binary>/../share/andrea/SUB: an install (GNUInstallDirs layout);
 *   3. the build tree: a marker file `andrea-build-tree` next to the binary (or one or two folders up,
 *      for the test programs in build/tests[/fuzz]) holds the source folder; SUB is looked up there.
 * Invariant: the answer is a folder that exists (cases 2 and 3) or the variable's value (case 1).
 * Failure contract: -1 with err = "SUB: data folder not found (looked in A, B; set VAR)", one line.
 */
#ifndef ANDREA_DATA_PATH_H
#define ANDREA_DATA_PATH_H

#include <stddef.h>

#include "error.h"

/* The marker file CMake writes into the build tree (see CMakeLists.txt). */
#define ANDREA_BUILD_TREE_MARKER "andrea-build-tree"

/* Finds folder SUB (relative to share/andrea and to the source tree); env names the override
 * variable. out holds n bytes. 0 or -1 (err filled). */
int andrea_data_dir(const char *sub, const char *env, char *out, size_t n, ae_error *err);

#endif
