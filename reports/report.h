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

#define ANDREA_REPORT_MAPS_DEFAULT 1   /* heatmap PNGs per head and suite when maps_per_suite is 0 */
#define ANDREA_REPORT_MAPS_NONE (-1)   /* no per-head PNG (the overview images stay) */
#define ANDREA_REPORT_MAPS_ALL (-2)    /* a PNG for every shown example */
#define ANDREA_REPORT_MAPS_LABELLED (-3) /* example 0's PNG, for the heads labelled in some class only */
/* --report full's budget: one PNG per head and suite while heads x suites is at most this (the
 * bundled model: 32 x 11); beyond it (GPT-2-medium's 384 heads draw 4,224 PNGs of ~250 KB) the
 * labelled heads only. The default (small) draws the labelled heads' only, whatever the size. */
#define ANDREA_REPORT_PNG_BUDGET 1024

typedef struct {
    int examples_per_suite; /* examples shown per suite (interactive maps, token lists; 0 = default 2) */
    int quiet;
    /* heatmap PNGs per head and suite: the first N shown examples (0 = ANDREA_REPORT_MAPS_DEFAULT
     * within ANDREA_REPORT_PNG_BUDGET, else as _LABELLED; or _NONE, _ALL, _LABELLED); more than
     * examples_per_suite shows that many examples */
    int maps_per_suite;
    /* NULL, or seconds added per stage (analyze --timing): heatmaps and thumbnails, overview
     * images, interactive data, head pages, index */
    double *stage_seconds; /* [ANDREA_REPORT_STAGES] */
    /* 0 (--report small, the default): maps_per_suite 0 draws the labelled heads' PNGs only; 1
     * (--report full): every head's while heads x suites <= ANDREA_REPORT_PNG_BUDGET */
    int full;
    /* NULL, or the catalog rows shared by reports of one unchanging catalog (a series' reports:
     * each shows every step of its training run, read once for all of them;
     * catalog/catalog_report.h), the caller's to free */
    struct catalog_report_cache *catalog_cache;
} andrea_render_options;
#define ANDREA_REPORT_STAGES 5

/* Examples a report keeps per suite for these options (shown examples, at least the PNGs'). */
int andrea_render_examples(const andrea_render_options *opt);
/* PNG heatmaps of example e of a suite with n_examples shown, for the heads that get PNGs at all
 * (the labelled ones only, under _LABELLED or past the budget): 1 or 0. */
int andrea_render_png_wanted(const andrea_render_options *opt, int e);

/* Renders the report for the model of dump_path, reading scores from db_path, into out_dir
 * (created if missing); writes out_dir/index.html. */
int andrea_render(const char *dump_path, const char *db_path, const char *out_dir,
                  const andrea_render_options *opt, ae_error *err);

#endif
