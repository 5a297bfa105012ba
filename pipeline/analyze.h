/* analyze.h — one `andrea analyze` as one library call: load -> forwards -> causal check ->
 * catalog -> report, for one checkpoint or a series, serial or under MPI.
 *
 * Job: the plan says everything the run needs (cli/ parses argv into it once and checks its paths);
 * andrea_analyze does the work and hands each result to the plan's printer, which is the caller's
 * (cli/analyze_print.c prints them). Engine settings travel in plan->run.engine from the option
 * parser to andrea_engine_open untouched: the forwards' engine and the causal check's are opened
 * from that one struct.
 * One checkpoint: its report is plan->dir itself. Several: each is scored into the one catalog
 * DIR/catalog.db, then rendered into DIR/NAME, then the series page DIR/index.html is written
 * (pipeline/series.h). --maps-only: the dumps alone, no catalog and no report.
 * MPI (docs/cluster.md): every rank calls andrea_analyze with the same plan; rank 0 alone writes
 * the catalog, renders (unless checkpoints are spread over the ranks) and calls the printer.
 * Failure contract: -1 with err ("FILE: problem"); a failure on any rank fails every rank. What
 * was written before the failure stays consistent: the catalog's rows of a checkpoint or a series
 * go in one transaction, reports and dumps under temporary names.
 */
#ifndef ANDREA_PIPELINE_ANALYZE_H
#define ANDREA_PIPELINE_ANALYZE_H

#include "../analyzer/classify.h"
#include "../common/error.h"
#include "../dump/dump_write.h"
#include "../engine/forward.h"
#include "../run/run.h"
#include "../probes/probe.h"
#include "../reports/report.h"
#include "../reports/series.h"
#include "series.h" /* the series' phases (SERIES_PHASES) */

/* Where one checkpoint's time went (analyze --timing). */
typedef struct {
    andrea_dump_stats forwards;     /* the forward loop's own split (engine open, forwards, sinks, writes) */
    andrea_classify_timing classify; /* scoring, the causal check and its parts */
    double t_load;                  /* model load + probes */
    double t_hash;                  /* waiting for the checkpoint's sha256 */
    double t_catalog, t_circuits;   /* the catalog write (without), the circuit scores */
    double t_report;                /* the report, and its stages (andrea_render_options.stage_seconds) */
    double t_report_stage[ANDREA_REPORT_STAGES];
    double t_all;
} andrea_analyze_timing;

/* One checkpoint's result, as the printer gets it (pointers valid during the call). */
typedef struct {
    const char *ckpt;                /* as given */
    const char *dump_path;           /* the dump written, or NULL */
    int n_suites;
    const andrea_analysis *analysis; /* NULL with --maps-only */
    const char *db_path;             /* DIR/catalog.db; NULL with --maps-only */
    const char *report_dir;          /* the checkpoint's report folder; NULL with --maps-only */
    const andrea_analyze_timing *timing; /* NULL unless plan->timing */
} andrea_analyze_done;

/* What the caller does with results (rank 0 only; any callback may be NULL). */
typedef struct {
    void *ctx;
    /* a checkpoint analysed alone, or one dump of --maps-only */
    void (*checkpoint)(void *ctx, const andrea_analyze_done *d);
    /* a series: its data (the labelled heads per step), catalog and page, once written */
    void (*series)(void *ctx, const series_data *d, const char *db_path, const char *page_path);
    /* --timing in a series: each checkpoint's scoring (its report fields 0: the reports come
     * later), then the series' phases (seconds[SERIES_PHASES], pipeline/series.h) and the
     * reports' stages summed (report_stages[ANDREA_REPORT_STAGES]) */
    void (*scored_timing)(void *ctx, const char *ckpt, const andrea_analyze_timing *t);
    void (*series_timing)(void *ctx, int n, const double *seconds, const double *report_stages);
} andrea_analyze_printer;

typedef struct {
    const char *const *ckpts;   /* the checkpoints, n_ckpts >= 1 (the CLI puts the bundled model here
                                 * when none was given) */
    int n_ckpts;
    const char *dir;            /* the output folder (exists) */
    const char *tok_dir;        /* --tokenizer, or NULL */
    const char *dump_file;      /* --dump FILE (one checkpoint), or NULL */
    int keep_dumps;             /* --keep-dumps: DIR/NAME.h5 each */
    int maps_only;              /* --maps-only: the dump alone */
    probe_sources *ps;          /* --probes / --texts (streams are read once, by andrea_analyze) */
    probe_options po;           /* --n, --len, --seed */
    const char *rules_file;     /* --rules' path (an input no dump may be renamed over), or NULL */
    andrea_classify_options classify; /* rules, causal check, step; its engine options are replaced
                                       * by run.engine below */
    andrea_run_options run;     /* the forward run (run/run.h): its engine options (the causal check
                                 * opens its engine from the same), --maps, --contrib */
    int report_maps;            /* --report-maps (andrea_render_options.maps_per_suite) */
    int report_full;            /* --report full (andrea_render_options.full) */
    int timing;                 /* fill andrea_analyze_done.timing */
    andrea_analyze_printer printer;
} andrea_analyze_plan;

/* The defaults of `andrea analyze` (dir "andrea-out", the run's, classify's and the engine's own
 * defaults); ckpts, ps and printer left for the caller. */
void andrea_analyze_plan_init(andrea_analyze_plan *p);

/* Runs the plan. 0, or -1 with err. */
int andrea_analyze(const andrea_analyze_plan *p, ae_error *err);

#endif
