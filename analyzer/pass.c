/* pass.c — the passes, made from the class table (probes/classes.c), the generic pass and the
 * label rule (see pass.h). */
#include "pass.h"

#include <math.h>
#include <string.h>

/* Unknown suite names: the user's targets define the class, so only the mass statistics apply,
 * under the same rule as the built-in classes. */
const andrea_pass andrea_pass_generic = {
    "generic", "the probe file's explicit targets", {0.30, 3.0, 0.15, 0}, "top1", andrea_score_acc_top1, NULL,
};

#define MAX_PASSES 64
static andrea_pass passes[MAX_PASSES];
static int n_passes = -1;

static void build_passes(void) {
    int n = 0;
    for (int i = 0; andrea_probe_classes[i].name && n < MAX_PASSES; i++, n++) {
        const probe_class *c = &andrea_probe_classes[i];
        andrea_pass *p = &passes[n];
        p->name = c->name;
        p->targets = c->targets;
        p->rule = c->rule;
        p->cls = c;
        p->extra_name = c->extra == PROBE_EXTRA_NONE ? NULL : c->extra_name;
        p->extra = c->extra == PROBE_EXTRA_TOP1 ? andrea_score_acc_top1 : c->extra == PROBE_EXTRA_HARD_TOP1 ? andrea_score_acc_hard_top1 : NULL;
    }
    n_passes = n;
}

const andrea_pass *andrea_pass_for(const char *suite) {
    if (n_passes < 0) build_passes(); /* the table is constant: rebuilding gives the same entries */
    for (int i = 0; i < n_passes; i++)
        if (!strcmp(passes[i].name, suite)) return &passes[i];
    return &andrea_pass_generic;
}

int andrea_rule_labels(const andrea_label_rule *r, double score, double baseline, double control, int has_extra,
                       double extra) {
    if (!isfinite(score) || !isfinite(baseline) || !isfinite(control) || baseline <= 0) return 0;
    /* a NULL extra (no hard query) cannot show what min_extra asks for */
    if (has_extra && r->min_extra > 0 && !(isfinite(extra) && extra >= r->min_extra)) return 0;
    return score >= r->min_score && score / baseline >= r->min_ratio &&
           score - control >= r->min_margin;
}
