/* run_names.h — the names a checkpoint's run, report folder and dump take in DIR.
 *
 * Job: one rule for the name of each checkpoint's run (its file name's stem, "-k" for a stem an
 * earlier checkpoint of the list has), used for the report folder DIR/NAME and the kept dump
 * DIR/NAME.h5, checked before any work.
 */
#ifndef ANDREA_RUN_NAMES_H
#define ANDREA_RUN_NAMES_H

#include <stddef.h>

#include "../common/error.h"

/* File-name stem of a checkpoint: "models/andrea-bundled.bin" -> "andrea-bundled"; a stem that
 * would leave DIR ("..", a hidden name), collide with a file of the series page or end in ".h5"
 * (another checkpoint's kept dump) gets "_" or "-ckpt". */
void andrea_run_stem(const char *path, char *out, size_t cap);

/* The run's name (the stem, "-(index+1)" for index > 0) and its dump's path: dump_file when given,
 * else DIR/NAME.h5. */
void andrea_run_name_and_dump(const char *ckpt, int index, const char *dir, const char *dump_file, char *name,
                              size_t name_cap, char *dump_path, size_t dump_cap);

/* Suffixes that make the n run names unique: checkpoint i takes its stem, or STEM-k with the
 * smallest k >= 2 no earlier name has (p/m.bin, q/m-2.bin, r/m.bin are m, m-2, m-3: two of them in
 * one folder would write over each other, and under MPI two ranks waited on one folder's lock
 * forever). index: [n]; -1 when out of memory. */
int andrea_run_unique_names(const char *const *ckpts, int n, int *index);

/* The report folders DIR/NAME of a series' n checkpoints must each be a folder of its own in DIR,
 * not a link (reports/out_folder.h): 0, or -1 with err. */
int andrea_run_check_series_folders(const char *dir, const char *const *ckpts, int n, const int *index, ae_error *err);

#endif
