/* series.h — the pages of a checkpoint series: what `andrea analyze CKPT CKPT..` writes at the top of
 * its output folder once every checkpoint is scored (docs/report.md, "A checkpoint series").
 *
 * Job: lay out the scores of several checkpoints of one training run, as the catalog gives them
 * (catalog/catalog_series.h), in series_page.c: index.html with, per class, a head x step matrix of scores
 * (labelled cells marked) and a formation plot per head (score against step, the class's label
 * threshold drawn, a log step axis when the steps span a decade or more), links to each
 * checkpoint's report; and a terminal table of the labelled heads per step and class.
 * Invariants: checkpoints are ordered by step (those without a step keep the caller's order, after
 * the others); scores are the view's `current` rows (docs/catalog.md), NaN where not measured;
 * every string shown in HTML is escaped; the page is one self-contained file (inline SVG, no
 * script, nothing fetched) written through andrea_write_file_atomic.
 * Failure contract: -1 with "FILE: problem"; nothing partial is left.
 */
#ifndef ANDREA_SERIES_H
#define ANDREA_SERIES_H

#include <stdio.h>

#include "../catalog/catalog_series.h"
#include "../common/error.h"

/* Writes the series page to path (e.g. DIR/index.html). */
int andrea_series_page_write(const series_data *d, const char *path, ae_error *err);

/* Writes, to path, the page that stands in for the series page while the checkpoint reports are
 * rewritten: "This series is being written" (or was stopped: run it again), no links, no scores.
 * Its title keeps the folder a series folder (reports/out_folder.h). A series run writes it
 * before its first report, so a run stopped midway never leaves an earlier complete-looking page
 * linking to reports half replaced. */
int andrea_series_page_write_pending(const char *path, ae_error *err);

/* Prints the labelled heads per step (rows) and class (columns) as an aligned text table. */
void andrea_series_table_write(FILE *out, const series_data *d);

#endif
