/* report_collect.h — the report-map collector: a sink of the forward loop (run/batch_sink.h)
 * that keeps only what the report shows, so `andrea analyze` can render without a dump file.
 *
 * Job: for each suite keep its first `examples` items (tokens, target matrix) and their attention
 * maps for every head (float, exactly the values a dump of the same run would store: fp16 maps
 * are kept as their fp32 values), then render the report from them and the catalog
 * (andrea_render_collected, the same pages andrea_render makes from a dump).
 * Invariants: memory is examples x L x H x T x T floats per suite, never a whole suite's maps,
 * and once a suite ends, where its maps are fp16 values (fp16 runs, the default), their lower
 * triangles as fp16: a quarter of that (read back as the same floats);
 * under MPI each rank keeps the examples of its own batches (a suite's first items can be on any
 * rank: the batches of all suites are sharded together) and suite_end sums them onto rank 0,
 * which renders (every other rank holds zeros there), so its report is the serial one.
 * Failure contract: -1 with "report: out of memory" or render's "FILE: problem".
 */
#ifndef ANDREA_REPORT_COLLECT_H
#define ANDREA_REPORT_COLLECT_H

#include "../run/batch_sink.h"
#include "../engine/model.h"
#include "report.h"

typedef struct report_collector report_collector;

/* A collector for n_suites suites of model m (0 examples = the report's default). */
report_collector *andrea_report_collector_open(const andrea_model *m, int n_suites, int examples, ae_error *err);
andrea_batch_sink andrea_report_collector_sink(report_collector *rc);
/* Renders the report of the collected maps with the scores of db_path into out_dir. sha256: the
 * checkpoint's; dump_path: the dump written beside, or NULL; maps_dtype: "fp16" or "fp32". */
int andrea_render_collected(report_collector *rc, const char *sha256, const char *dump_path, const char *maps_dtype,
                            const char *db_path, const char *out_dir, const andrea_render_options *opt, ae_error *err);
void andrea_report_collector_free(report_collector *rc);

#endif
