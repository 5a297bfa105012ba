/* analysis.c — lifetime of an andrea_analysis (see analysis.h). */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

void andrea_analysis_free(andrea_analysis *a) {
    for (int s = 0; s < a->n_suites; s++) free(a->suites[s].heads);
    free(a->suites);
    free(a->settings_json);
    memset(a, 0, sizeof *a);
}
