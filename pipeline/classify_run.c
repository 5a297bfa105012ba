/* classify_run.c — see classify_run.h. */
#include "classify_run.h"

#include <stdio.h>
#include <string.h>

#include "../catalog/catalog.h"
#include "../catalog/catalog_circuits.h"
#include "../common/mpi_shard.h"
#include "../common/printable.h"
#include "../common/progress.h"
#include "../dump/dump.h"
#include "run_notes.h"

/* The notes of a scored run: why the causal check did not run (a warning when --no-causal let a
 * missing checkpoint through), intervals left out, map-only suites, --rules naming no suite. */
static void print_notes(const andrea_analysis *a, const andrea_classify_options *o) {
    char shown[sizeof a->ablation_note]; /* the note quotes the dump's checkpoint path: no escape reaches the terminal */
    if (andrea_mpi_rank() == 0) andrea_note_unused_rules("classify", &o->rules, a);
    if (a->ablation_note[0])
        fprintf(stderr, "andrea classify: %s: %s\n", o->no_causal && strstr(a->ablation_note, "--no-causal") ? "warning" : "note",
                andrea_shown(a->ablation_note, shown, sizeof shown));
    if (a->interval_note[0] && !andrea_progress_quiet) fprintf(stderr, "andrea classify: note: %s\n", a->interval_note);
    if (a->skipped_note[0] && andrea_mpi_rank() == 0) /* map-only suites: no NULL rows, one line */
        fprintf(stderr, "andrea classify: note: %s\n", andrea_shown(a->skipped_note, shown, sizeof shown));
}

int andrea_classify_run(const char *dump_path, const char *db, const andrea_classify_options *o,
                        andrea_classify_result *r, ae_error *err) {
    memset(r, 0, sizeof *r);
    if (andrea_catalog_check_writable(db, err)) return -1; /* before the work (every rank: it only reads) */
    /* A dump the user gives may be crafted to crash HDF5 itself: read it once in a sacrificial
     * child first (dump/dump.h). `andrea analyze` skips this: it classifies its own new file. */
    if (andrea_dump_check_isolated(dump_path, err)) return -1;
    if (andrea_classify_dump(dump_path, o, &r->analysis, err)) return -1;
    r->t_scored = andrea_now_seconds();
    print_notes(&r->analysis, o);
    /* MPI: the statistics were pooled on every rank; rank 0 alone writes and prints them. */
    r->prints = andrea_mpi_rank() == 0;
    andrea_catalog_entry entry = {.analysis = &r->analysis};
    const int wrc = r->prints ? andrea_catalog_write_all(db, &entry, 1, err) : 0;
    if (r->prints && !wrc) andrea_note_catalog_entries("classify", &entry, 1);
    if (andrea_mpi_agree(wrc, err)) {
        andrea_analysis_free(&r->analysis);
        return -1;
    }
    r->run_id = entry.run_id;
    return 0;
}
