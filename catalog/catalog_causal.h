/* catalog_causal.h — the causal check's evidence of one run into the catalog (schema 3's columns:
 * runs.ablation; suites' yardstick, set and random sets; head_scores' intervals, percentile,
 * leave-one-in and verdict). docs/catalog.md lists them.
 * Invariant: called inside the writer's transaction right after the run's rows were inserted;
 * a statistic not measured stays NULL, never 0.
 * Failure contract: -1 with "CATALOG: sqlite3_... failed (...)", the transaction left to roll back. */
#ifndef ANDREA_CATALOG_CAUSAL_H
#define ANDREA_CATALOG_CAUSAL_H

#include <sqlite3.h>
#include <stdint.h>

#include "../analyzer/analysis.h"

int andrea_catalog_insert_causal(sqlite3 *db, const char *path, const andrea_analysis *a, int64_t run, ae_error *err);

#endif
