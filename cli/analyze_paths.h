/* analyze_paths.h — the paths of an `andrea analyze` plan, checked before any work.
 *
 * Job: refuse, as usage errors, what cannot be one run: --dump FILE inside the report DIR (its
 * catalog, a page, or a folder every report clears: compared by real paths, so any spelling of
 * DIR counts), and one checkpoint file given twice (a link, an overlapping glob).
 */
#ifndef ANDREA_CLI_ANALYZE_PATHS_H
#define ANDREA_CLI_ANALYZE_PATHS_H

#include "../pipeline/analyze.h"

/* Once DIR exists: 0, or the usage-error code after its message. */
int cli_analyze_check_paths(const andrea_analyze_plan *p);

#endif
