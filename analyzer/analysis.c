/* analysis.c — lifetime of an andrea_analysis (see analysis.h). */
#include "analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void andrea_analysis_free(andrea_analysis *a) {
    for (int s = 0; s < a->n_suites; s++) free(a->suites[s].heads);
    free(a->suites);
    free(a->settings_json);
    memset(a, 0, sizeof *a);
}

void andrea_note_append(char *note, size_t cap, const char *text) {
    if (!note || !cap) return;
    const size_t used = strlen(note);
    if (used + 1 < cap) snprintf(note + used, cap - used, "%s%s", used ? "; " : "", text);
}

void andrea_suite_causal_clear(andrea_suite_scores *s, int NH) {
    s->clean_loss = s->ablation_mean = s->ablation_median = s->ablation_mad = NAN;
    s->n_ablation_items = s->group_size = s->n_controls = 0;
    s->group_delta = s->group_ci_low = s->group_ci_high = NAN;
    s->control_median = s->control_mad = s->control_q80 = s->control_max = NAN;
    for (int i = 0; s->heads && i < NH; i++) {
        andrea_head_score *h = &s->heads[i];
        h->ablation_delta = h->ablation_ci_low = h->ablation_ci_high = h->ablation_pct = NAN;
        h->restore_delta = h->restore_ci_low = h->restore_ci_high = h->direct_delta = NAN;
        h->evidence = 0;
    }
}
