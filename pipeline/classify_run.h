/* classify_run.h — `andrea classify DUMP --db CATALOG` as one call: the dump checked in a
 * sacrificial child, scored and classified (with the causal check), the run written into the
 * catalog, under MPI too.
 *
 * Job: the stage order and the MPI coordination of classify, so cli/ only parses and prints.
 * MPI (docs/cluster.md): every rank calls it; the statistics are pooled on every rank, rank 0
 * alone writes the catalog and prints (*prints), and a failure on any rank fails every rank.
 * Notes on stderr as the run goes (map-only suites, unused --rules, the causal check's note).
 * Failure contract: -1 with err; the catalog holds all of the run or none of it.
 */
#ifndef ANDREA_CLASSIFY_RUN_H
#define ANDREA_CLASSIFY_RUN_H

#include <stdint.h>

#include "../analyzer/classify.h"
#include "../common/error.h"

typedef struct {
    andrea_analysis analysis; /* the scored run (andrea_analysis_free it) */
    int64_t run_id;           /* its runs.run_id in the catalog */
    int prints;               /* 1 on the rank that prints the result (rank 0; a serial run) */
    double t_scored;          /* andrea_now_seconds() once scored, before the catalog write */
} andrea_classify_result;

/* Classifies dump_path into the catalog db. 0, or -1 with err (nothing to free then). */
int andrea_classify_run(const char *dump_path, const char *db, const andrea_classify_options *o,
                        andrea_classify_result *r, ae_error *err);

#endif
