/* report_kept.h — what a report written again into its folder keeps of the reports before it.
 *
 * Job: a report shows the scores of every class the catalog holds for its checkpoint, each from
 * its current run (the newest run that scored it: docs/catalog.md), but draws maps only of the
 * suites its own run (or dump) holds. The heatmaps of another such class (per-head PNGs and the
 * thumbnail grid) that an earlier report drew into this folder stay, and the pages link them, as
 * long as the catalog still lists the run they were drawn with as that class's current run for
 * this checkpoint; every other earlier suite's images go (andrea_out_folder_clear spares only
 * these), and a current class whose images the folder does not hold is said so on the pages.
 * Names: a suite's images are named after the suite, maps/L{l}_H{h}/s-{suite}_e{e}.png and
 * overview/thumbs_s-{suite}.png ({suite}: andrea_file_tag, one to one), not after its position in
 * the run (the names before, s{i}-{slug}): this run's suites take the positions 0.. again, and
 * two suite names that slug alike (a.b, a_b) would take one name across two runs.
 * The list: overview/images.tsv says, one line a suite, which checkpoint and run (id and time)
 * its images were drawn with, and where the thumbnail grid put the heads:
 *   TAG \t SHA256 \t RUN \t RUN_TIME \t X0,Y0,CELL_W,CELL_H
 * The files alone could not say it: a suite scored again by a run that drew no maps here (a dump
 * classified into the catalog) leaves images of a run that is no longer current. The list is
 * written after the images and before index.html; a report stopped earlier leaves the one before,
 * whose lines for the suites it redrew no longer match their current run, so those go next time.
 * Invariants: a kept suite is a class of the report that none of its suites is, whose checkpoint,
 * run id and run time are those its line records, and whose thumbnail grid is there; pages link
 * only images there when they are written (the folder's lock is held throughout).
 * Failure contract: a missing, unreadable or malformed list keeps nothing (never an error);
 * -1 with "DIR: out of memory" or the list's write error.
 */
#ifndef ANDREA_REPORT_KEPT_H
#define ANDREA_REPORT_KEPT_H

#include <stddef.h>

#include "../common/buf.h"
#include "../common/error.h"
#include "plots.h"
#include "report_data.h"
#include "text.h"

#define ANDREA_REPORT_IMAGES_LIST "overview/images.tsv"

/* The heatmap of head (l, h) on example e of suite, and suite's thumbnail grid (relative paths). */
void andrea_report_map_name(int l, int h, const char *suite, int e, char *out, size_t cap);
void andrea_report_thumbs_name(const char *suite, char *out, size_t cap);

typedef struct {
    char tag[ANDREA_FILE_TAG_MAX]; /* the suite's file-name form */
    report_run run;                /* the class's current run (id -1: unknown) */
    plot_grid grid;                /* of the kept thumbnail grid; cell_w 0: unknown */
} report_drawn;

typedef struct {
    int n;                /* classes of the report that none of its suites is, in class order */
    int *cls;             /* [n] their index in report_data.classes */
    report_drawn *drawn;  /* [n] */
    unsigned char *kept;  /* [n] 1: the earlier report's images of it stay */
} report_earlier;

/* Fills e from d (classes, class_runs, sha256) and out_dir's list, when out_dir holds an andrea
 * report. Call it holding the folder, before andrea_out_folder_clear. 0, or -1 (out of memory). */
int andrea_report_earlier_find(const report_data *d, const char *out_dir, report_earlier *e, ae_error *err);
/* andrea_out_folder_clear's keep: ctx is the report_earlier; 1 for a kept suite's images. */
int andrea_report_kept_file(const char *sub, const char *folder, const char *name, const void *ctx);
/* Writes out_dir's list: d's suites that have scores and images (thumb_grids: [n_suites], where
 * their grids put the heads), then e's kept suites. */
int andrea_report_images_write(const report_data *d, const report_earlier *e, const plot_grid *thumb_grids,
                               const char *out_dir, ae_error *err);
/* Head (l, h)'s page: a section per class of e, with its kept heatmaps or a line saying it has none. */
void andrea_report_earlier_head_html(andrea_buf *b, const report_data *d, const report_earlier *e, const char *out_dir,
                                     int l, int h);
/* The index: one note naming e's classes, and for each whether its images are kept. */
void andrea_report_earlier_index_html(andrea_buf *b, const report_data *d, const report_earlier *e);
void andrea_report_earlier_free(report_earlier *e);

#endif
