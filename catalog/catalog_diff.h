/* catalog_diff.h — what changed between two checkpoints of one catalog or of two (`andrea diff`;
 * docs/catalog.md, section "Comparing two checkpoints").
 *
 * Job: resolve two selectors NAME[@STEP] to analysed checkpoints (--from in the first catalog,
 * --to in the second, or both in the one) and list, per (layer, head, class), the score and label
 * in each and the change.
 * Invariants:
 *   - each catalog is opened read-only (andrea_catalog_open_ro: its checks and time limit) and
 *     never created; selectors are bound, never pasted; each side is read by the same query on
 *     its own catalog and the two are joined in a scratch database in memory, so a diff across
 *     two catalogs gives the rows one catalog holding both checkpoints gives;
 *   - a selector names a model (models.name), a series (the name without its trailing step
 *     part, andrea_catalog_series_from_name in catalog.h), a path (models.path, or the file named,
 *     resolved) or a sha256 prefix (4+ hex digits), tried in that order, the first kind with a
 *     match deciding; with @STEP only checkpoints of that step match; of several matches the
 *     highest step wins, and different checkpoints tied there are ambiguous (an error listing
 *     them by sha256 prefix and path), never picked silently; each checkpoint is read from its
 *     current runs (each class from the newest run that scored it, as heads reads it), and
 *     --changed lists the labels both sides measured that differ;
 *   - rows come sorted by |delta| descending (rows without a delta last), then layer, head, class.
 * Failure contract: -1 with "DB: problem" (exit 1: a missing or unreadable catalog, one that is
 * not andrea's, different shapes), or CATALOG_DIFF_USAGE with a message (exit 2: a selector
 * matching nothing in its catalog, which lists the names that catalog holds; an ambiguous
 * selector; a malformed selector; a class neither checkpoint has). DB is the catalog the problem
 * is in (the second one for the shapes and --class of a diff across two).
 */
#ifndef ANDREA_CATALOG_DIFF_H
#define ANDREA_CATALOG_DIFF_H

#include <stddef.h>

#include "catalog.h"

#define CATALOG_DIFF_USAGE 2

typedef struct {
    const char *from, *to;  /* NAME[@STEP] */
    const char *class_name; /* NULL: every class */
    int changed_only;       /* only rows whose label differs */
} catalog_diff_options;

/* --from is looked up in from_db, --to in to_db (NULL or the same path: from_db too).
 * Columns: layer, head, class, from_score, to_score, delta, from_label, to_label, change. */
int andrea_catalog_diff(const char *from_db, const char *to_db, const catalog_diff_options *o, catalog_rows *out,
                        ae_error *err);


#endif
