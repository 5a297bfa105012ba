/* report_data.h — what a report shows, gathered in memory, and the writer that lays it out.
 *
 * Job: separate WHERE the data comes from (report.c: a dump, a catalog, a tokenizer) from HOW it
 * is shown (report_write.c: PNGs and HTML), so the writer can be tested on data made in a test.
 * Invariants: scores are [n_classes, n_layer, n_head] with NaN for "not measured"; maps are read
 * through a callback one head at a time ([T, T] floats), so the writer holds a bounded batch of
 * maps whatever the model's size; every string here is raw (unescaped): the writer escapes all
 * of them.
 * Failure contract: andrea_report_write returns -1 with "FILE: problem"; files already complete stay,
 * none is partial (all go through andrea_write_file_atomic).
 */
#ifndef ANDREA_REPORT_DATA_H
#define ANDREA_REPORT_DATA_H

#include <stddef.h>

#include "../catalog/catalog_report.h"
#include "../common/error.h"
#include "report.h"

typedef struct {
    char name[64];        /* suite = class it tests */
    int T;                /* map side in the dump */
    int n_seq;            /* items in the dump */
    int n_examples;       /* examples shown (<= n_seq) */
    int *n_tokens;        /* [n_examples] */
    int *tokens;          /* [n_examples, T] */
    unsigned char *target; /* [n_examples, T, T]: 1 where (query, key) is a probe target */
    /* 0: its maps are its own; k > 0: every shown example's maps are, value for value, those of
     * suite k - 1 (a twin: the same items, the same forward), whose interactive data serves both */
    int maps_of;
} report_suite;

/* A head's cell of one class, and a catalog run, as the catalog gives them. */
typedef catalog_head_cell report_score;
typedef catalog_run_ref report_run;

typedef struct report_data report_data;

struct report_data {
    char model[256];          /* display name */
    char ckpt_path[4096];
    char sha256[65];
    char dump_path[4096];
    int from_dump;            /* 1: maps read from the dump at dump_path; 0: from the forward's */
    char db_path[4096];
    int n_layer, n_head, d_model, vocab_size;
    char maps_dtype[8];

    int n_suites;
    report_suite *suites;

    int n_classes;
    char (*classes)[64];      /* [n_classes] */
    report_score *scores;     /* [n_classes, L, H]; NULL when the catalog had no rows */
    report_run *class_runs;   /* [n_classes]: the run whose rows gave each class's scores, or NULL */

    /* token text: bytes of token id into buf (<= cap), -1 when unknown; bos id or -1 */
    int (*token_bytes)(const report_data *d, int id, char *buf, size_t cap);
    int bos;
    /* attention map of one head on one example: out [T, T], query × key. Called from one thread. */
    int (*read_map)(const report_data *d, int suite, int example, int layer, int head, float *out, ae_error *err);
    void *ctx;

    /* checkpoints of the same training run (several steps), for score-against-step plots */
    char run_name[256];
    int n_steps;
    double *steps;            /* [n_steps], increasing */
    report_score *step_scores; /* [n_steps, n_classes, L, H] */

    char note[512];           /* shown on the index (e.g. why token text is missing) */
};

/* Waits for out_dir's lock (andrea_out_folder_lock), then checks the folder again holding it
 * (andrea_out_folder_check: a page of another kind, or someone's index.html, written there while it
 * waited is refused, never replaced), clears the earlier report and writes this one. */
int andrea_report_write(const report_data *d, const char *out_dir, const andrea_render_options *opt, ae_error *err);

/* Examples per suite when the options say 0. */
int andrea_report_default_examples(void);

/* Frees what a report_data owns (suites and their arrays, classes, scores, class runs, steps, step scores);
 * ctx is the caller's. */
void andrea_report_data_free(report_data *d);

/* Scores of d's model (by d->sha256) and its training run from the catalog db_path (report.c);
 * cache: NULL, or rows shared with other reports of that catalog (catalog_report.h). */
int andrea_report_load_catalog(report_data *d, const char *db_path, const char *seal, catalog_report_cache *cache,
                               ae_error *err);

/* Creates dir and its parents (like mkdir -p). */
int andrea_report_mkdirs(const char *dir, ae_error *err);

#endif
