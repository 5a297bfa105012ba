/* catalog_series.h — a checkpoint series' scores as plain rows, read from the catalog for the
 * series page and table (reports/series.h).
 *
 * Job: for the checkpoints of one training run, their names, steps and shapes (table `models`),
 * the classes in order with their rules' min_score (table `suites`), and each head's current score
 * and label (view head_catalog's `current` rows); opened read-only.
 * Invariants: checkpoints are ordered by step (those without a step keep the caller's order, after
 * the others); scores are NaN where not measured.
 * Failure contract: -1 with "FILE: problem" (unreadable or damaged catalog, out of memory);
 * *out is left empty.
 */
#ifndef ANDREA_CATALOG_SERIES_H
#define ANDREA_CATALOG_SERIES_H

#include "../common/error.h"

typedef struct {
    const char *sha256;      /* checkpoint sha256 (the catalog's model) */
    const char *report_href; /* link to its report, relative to the series page ("" = none) */
    /* 1: a report found in the series folder, not given: shown only when the catalog holds its
     * checkpoint in a series of the given ones (the entries with 0), and not given too */
    int found;
} series_input;

typedef struct {
    char name[256];          /* the model name in the catalog */
    char sha256[65];
    char href[1024];
    int has_step;
    long long step;
    int n_layer, n_head;     /* its own shape (a series may mix shapes) */
} series_checkpoint;

typedef struct {
    char name[256];          /* the series name (of the first checkpoint) */
    int n_ck;
    series_checkpoint *ck;   /* [n_ck], ordered by step */
    int n_classes;
    char (*classes)[64];     /* [n_classes] */
    double *threshold;       /* [n_classes]: the rule's min_score (NaN when unknown) */
    int n_layer, n_head;     /* the largest over the checkpoints */
    double *score;           /* [n_ck, n_classes, n_layer, n_head]; NaN = not measured */
    unsigned char *label;    /* same shape */
} series_data;

/* Reads the current scores of the n checkpoints from the catalog at db_path (read-only); a found
 * one (series_input.found) that does not join the series is left out. */
int andrea_series_load(const char *db_path, const series_input *in, int n, series_data *out, ae_error *err);
void andrea_series_free(series_data *d);

#endif
