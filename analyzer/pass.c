/* pass.c — the registry of class passes, the generic pass and the label rule (see pass.h). */
#include "pass.h"

#include <math.h>
#include <string.h>

/* Unknown suite names: the user's targets define the class, so only the mass statistics apply,
 * under the same rule as the built-in classes. */
const andrea_pass andrea_pass_generic = {
    "generic", "the probe file's explicit targets", {0.30, 3.0, 0.15}, "top1", score_acc_top1,
};

const andrea_pass *const andrea_passes[] = {
    &andrea_pass_prev_token, &andrea_pass_induction, &andrea_pass_duplicate,
    &andrea_pass_bracket,    &andrea_pass_entity,    &andrea_pass_bos,
    NULL,
};

const andrea_pass *andrea_pass_for(const char *suite) {
    for (int i = 0; andrea_passes[i]; i++)
        if (!strcmp(andrea_passes[i]->name, suite)) return andrea_passes[i];
    return &andrea_pass_generic;
}

int andrea_rule_labels(const andrea_label_rule *r, double score, double baseline, double control) {
    if (!isfinite(score) || !isfinite(baseline) || !isfinite(control) || baseline <= 0) return 0;
    return score >= r->min_score && score / baseline >= r->min_ratio &&
           score - control >= r->min_margin;
}
