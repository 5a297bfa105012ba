/* catalog_report.h — what a checkpoint's report shows of the catalog, as plain rows.
 *
 * Job: read, through the view head_catalog (docs/catalog.md columns: model, checkpoint_sha256,
 * step, layer, head, class, score, baseline, ablation_delta, label; the optional `current` (or
 * `latest` in catalogs of schema 1), `series`, `run`, `run_time`, `control`, `causal`, `evidence`
 * and `ablation` are used when the view has them), opened read-only, each head's cell per class
 * for one checkpoint (matched by sha256): for each class the current run's rows (the newest run
 * that scored that class on that checkpoint), except that the run which scored a given dump
 * (runs.dump_seal = its seal) wins for the classes it scored, so re-rendering an older dump shows
 * its own run. Training runs: models of one series (the view's `series`; else names that differ
 * only in their digits, "x_step100", "x_step2000") that have a step form one run; when the
 * checkpoint belongs to a run of two or more steps, every step's cells come too.
 * Invariants: cells are [n_classes, n_layer, n_head], NaN where not measured, causal -1 where
 * NULL; a row naming a head outside n_layer x n_head, or no head, shows nowhere; a verdict or
 * method that is not a plain word (a-z, '_') is read as "".
 * Failure contract: -1 with "FILE: problem" (no catalog, not an andrea catalog, a newer schema,
 * SQL errors, out of memory); what rows hold is freed by andrea_catalog_report_rows_free either way.
 */
#ifndef ANDREA_CATALOG_REPORT_H
#define ANDREA_CATALOG_REPORT_H

#include "../common/error.h"

/* One head's cell of one class. */
typedef struct {
    double score, baseline, control, ablation;
    int label;
    int causal;           /* the view's causal: 1, 0, or -1 when NULL (not measured) */
    char evidence[16];    /* the verdict: "necessary", "redundant", "pattern_only", or "" (none) */
    char ablation_method[12]; /* the run's --ablation ("mean", "resample", "zero"), or "" */
} catalog_head_cell;

/* A run of the catalog (runs.id, runs.time): the head_catalog view's `run` and `run_time`. */
typedef struct {
    long long id;         /* -1: unknown (no rows, or a view without `run`) */
    char time[40];
} catalog_run_ref;

/* What reports of one catalog share (a series' reports, rendered after its rows are written): the
 * catalog's list of checkpoints with a step and each checkpoint's cells, read once instead of once
 * per report (a report shows every step of its training run: 100 reports read 100 x 100 sets).
 * Valid while the catalog does not change; the rows of a different catalog, model shape or class
 * list replace what it held. */
typedef struct catalog_report_cache catalog_report_cache; /* reports/report.h names the struct too */
catalog_report_cache *andrea_catalog_report_cache_new(void); /* NULL: out of memory (then none) */
void andrea_catalog_report_cache_free(catalog_report_cache *c);

typedef struct {
    /* in */
    catalog_report_cache *cache; /* NULL, or shared by reports of an unchanging catalog (above) */
    const char *sha256;       /* the checkpoint */
    const char *seal;         /* the seal of the dump being shown (its run wins), or NULL */
    int n_layer, n_head;      /* the model's shape */
    const char *const *first; /* [n_first] classes listed first, in this order (a dump's suites) */
    int n_first;
    /* out */
    int n_classes;            /* the first ones (repeats once), then the catalog's others by name */
    char (*classes)[64];
    char model[256];          /* the catalog's name of the checkpoint, "" when it has no rows */
    catalog_head_cell *scores; /* [n_classes, L, H]; NULL when the catalog had no rows */
    catalog_run_ref *class_runs; /* [n_classes]: the run whose rows gave each class's cells, or NULL */
    char run_name[256];       /* the training run (a series of two or more steps), else "" */
    int n_steps;
    double *steps;            /* [n_steps], increasing */
    catalog_head_cell *step_scores; /* [n_steps, n_classes, L, H] */
} catalog_report_rows;

int andrea_catalog_report_rows(catalog_report_rows *rows, const char *db_path, ae_error *err);
/* Frees the classes and every out array; the in fields are the caller's. */
void andrea_catalog_report_rows_free(catalog_report_rows *rows);

#endif
