/* series.h — `andrea analyze CKPT CKPT..`: the outer loop over a checkpoint series (internal to
 * pipeline/: andrea_analyze calls it).
 * Score every checkpoint first (each into the one catalog), then render every checkpoint's report
 * (so each sees the whole series: full score-against-step plots), then the series page
 * DIR/index.html (reports/series.h), whose data the caller gets (andrea analyze prints a table of
 * labelled heads across steps).
 * Progress lines on stderr name the checkpoint and k/N (none with --quiet).
 * MPI (docs/cluster.md): with at least as many checkpoints as ranks, each rank scores a contiguous
 * share of the checkpoints alone (andrea_mpi_set_alone), rank 0 writes every checkpoint's catalog
 * rows in checkpoint order from what the others send (analyzer/gather_mpi.h), each rank renders
 * the reports of its own checkpoints; with fewer, each checkpoint is sharded over all ranks.
 * Failure contract: the first failure stops the loop and returns -1 with err set. */
#ifndef ANDREA_PIPELINE_SERIES_H
#define ANDREA_PIPELINE_SERIES_H

#include "../analyzer/analysis.h"
#include "../analyzer/circuits.h"
#include "../common/error.h"
#include "../reports/report.h"
#include "../reports/series.h"

/* What scoring one checkpoint left behind, for the render phase. */
typedef struct {
    char name[256];     /* dump/report stem ("dyck-step00400", "model-2" for a repeated stem) */
    char dump[4400];    /* DIR/NAME.h5 when a dump was kept, else "" */
    char db[4400];      /* DIR/catalog.db */
    char sha256[65];
    char maps_dtype[8];
    void *collected;    /* the report's example maps (report_collector *), or NULL: render from dump */
    /* set by the series loop: the scorer leaves the catalog alone and hands its rows over (heap
     * objects the series loop frees); the loop writes them once every checkpoint scored */
    int defer_catalog;
    andrea_analysis *analysis;
    andrea_circuits *circuits;
} analyze_scored;

/* Scores checkpoint i (dump + classify + catalog write), filling *out. */
typedef int (*analyze_score_fn)(int i, analyze_scored *out, void *ctx, ae_error *err);

/* The series' phases, in order: every checkpoint scored, the catalog rows written, the reports
 * rendered, the series page written. */
enum { SERIES_SCORING, SERIES_CATALOG, SERIES_REPORTS, SERIES_PAGE, SERIES_PHASES };

/* What the caller does once the series page is written (rank 0): page may be NULL. seconds (NULL:
 * not timed) receives each phase's wall time on rank 0. */
typedef struct {
    void *ctx;
    void (*page)(void *ctx, const series_data *d, const char *db_path, const char *page_path);
    double *seconds; /* [SERIES_PHASES] */
    double *report_stages; /* NULL, or [ANDREA_REPORT_STAGES]: the reports' stages, summed */
} series_written;

/* Runs the three phases over n checkpoints into dir, rendering each report with ropt (its quiet
 * also silences the progress lines); returns 0 or -1. */
int andrea_series_run(int n, const char *const *ckpts, const char *dir, analyze_score_fn score, void *ctx,
                      const andrea_render_options *ropt, const series_written *on, ae_error *err);

#endif
