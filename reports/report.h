/* report.h — heatmap PNGs, overview images and the browsable HTML index (docs/report.md).
 *
 * Job: turn a dump (attention maps, tokens) and a head catalog (scores, labels, ablations) into a
 * static, offline folder: index.html (sortable, filterable head table), one page per head with
 * its heatmaps for every suite and example, and overview images.
 * Invariants: every file is written under a temporary name and renamed; every token and path shown
 * in HTML is escaped; same inputs give the same bytes.
 * Failure contract: -1 with "FILE: problem"; files already complete stay, none is partial.
 */
#ifndef ANDREA_REPORT_H
#define ANDREA_REPORT_H

#include "../common/error.h"

typedef struct {
    int examples_per_suite; /* heatmaps per head and suite (0 = default) */
    int quiet;
} andrea_render_options;

/* Renders the report for the model of dump_path, reading scores from db_path, into out_dir
 * (created if missing); writes out_dir/index.html. */
int andrea_render(const char *dump_path, const char *db_path, const char *out_dir,
                  const andrea_render_options *opt, ae_error *err);

#endif
