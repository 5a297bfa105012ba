/* run_notes.c — see run_notes.h. */
#include "run_notes.h"

#include <stdio.h>
#include <string.h>

#include "../common/printable.h"

void andrea_note_catalog_entries(const char *cmd, const andrea_catalog_entry *e, int n) {
    for (int i = 0; i < n; i++)
        if (e[i].note[0]) {
            char shown[sizeof e[i].note];
            fprintf(stderr, "andrea %s: note: %s\n", cmd, andrea_shown(e[i].note, shown, sizeof shown));
        }
}

void andrea_note_unused_rules(const char *cmd, const andrea_rules *r, const andrea_analysis *a) {
    for (int i = 0; i < r->n; i++) {
        int used = 0;
        for (int s = 0; s < a->n_suites && !used; s++) used = !strcmp(r->names[i], a->suites[s].name);
        char shown[64];
        if (!used) /* a typo in a class name would otherwise keep the default rule without a word */
            fprintf(stderr, "andrea %s: note: --rules: no suite of this run is named '%s' (its rule is unused)\n", cmd,
                    andrea_printable(r->names[i], shown, sizeof shown));
    }
}
