/* pass.c — the passes, made from the class table (probes/classes.c), the generic pass and the
 * label rule (see pass.h). */
#include "pass.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

/* Unknown suite names: the user's targets define the class, so only the mass statistics apply,
 * under the same rule as the built-in classes. */
const andrea_pass andrea_pass_generic = {
    "generic", "the probe file's explicit targets", {0.30, 3.0, 0.15, 0, 0}, "top1", andrea_score_acc_top1, NULL,
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
        /* the maps' extra statistics; the others are set by andrea_pass_suite_finish or the weights */
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
    /* a NULL extra (no hard query, no norms) cannot show what min_extra or max_extra asks for */
    if (has_extra && r->min_extra > 0 && !(isfinite(extra) && extra >= r->min_extra)) return 0;
    if (has_extra && r->max_extra > 0 && !(isfinite(extra) && extra <= r->max_extra)) return 0;
    return score >= r->min_score && score / baseline >= r->min_ratio &&
           score - control >= r->min_margin;
}

int andrea_pass_has_extra(const andrea_pass *p) { return p->extra_name != NULL; }

void andrea_pass_head_stats(const andrea_pass *p, const score_acc *a, andrea_head_score *x) {
    const probe_score_kind kind = p->cls ? p->cls->score : PROBE_SCORE_MASS;
    x->score = x->baseline = x->control = x->extra = NAN;
    if (kind == PROBE_SCORE_OFFSET) {
        const score_offset o = andrea_score_acc_offset(a);
        x->score = o.share, x->baseline = o.baseline, x->control = o.control;
        x->extra = o.offset > 0 ? o.offset : NAN;
        return;
    }
    if (kind == PROBE_SCORE_MASS) {
        x->score = andrea_score_acc_score(a);
        x->baseline = andrea_score_acc_baseline(a);
        x->control = andrea_score_acc_control(a);
    }
    if (p->extra) x->extra = p->extra(a);
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* extra = norm_mean / the median norm_mean of the suite's heads with a finite one (NaN when a
 * head has none, or the median is 0). */
static void norm_ratios(andrea_head_score *heads, int NH) {
    double *v = malloc(sizeof(double) * (size_t)(NH > 0 ? NH : 1));
    int n = 0;
    for (int h = 0; v && h < NH; h++)
        if (isfinite(heads[h].norm_mean)) v[n++] = heads[h].norm_mean;
    double median = NAN;
    if (n > 0) {
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    }
    for (int h = 0; h < NH; h++)
        heads[h].extra = isfinite(heads[h].norm_mean) && median > 0 ? heads[h].norm_mean / median : NAN;
    free(v);
}

void andrea_pass_suite_finish(const andrea_pass *p, const andrea_label_rule *rule, andrea_head_score *heads, int NH) {
    if (p->cls && p->cls->extra == PROBE_EXTRA_NORM_RATIO) norm_ratios(heads, NH);
    for (int h = 0; h < NH; h++)
        heads[h].label = andrea_rule_labels(rule, heads[h].score, heads[h].baseline, heads[h].control,
                                            andrea_pass_has_extra(p), heads[h].extra);
}
