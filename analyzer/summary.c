/* summary.c — the per-class table of labelled heads (see summary.h). */
#include "summary.h"

#include <math.h>

#include "ablation_stats.h"

/* The class's extra statistic where it says what the head does (positional's offset, dormant's
 * output norm, copy suppression's OV share); top1 and hard_top1 only restate the score. */
static void extra_words(FILE *out, const andrea_suite_scores *su, const andrea_head_score *h) {
    const probe_class *c = su->pass ? su->pass->cls : NULL;
    if (!c || !isfinite(h->extra)) return;
    if (c->extra == PROBE_EXTRA_OFFSET) fprintf(out, " (offset %d)", (int)h->extra);
    else if (c->extra == PROBE_EXTRA_NORM_RATIO) fprintf(out, " (norm ratio %.3f)", h->extra);
    else if (c->extra == PROBE_EXTRA_WEIGHTS) fprintf(out, " (%s %.2f)", c->extra_name, h->extra);
}

/* One class's row: its labelled heads whose verdict is (pattern_only) or is not (!pattern_only)
 * pattern_only, with the verdict when there is one. 1 when it listed a head. */
static int class_row(FILE *out, const andrea_suite_scores *su, int nh, int pattern_only) {
    int any = 0;
    for (int i = 0; i < nh; i++) {
        const andrea_head_score *h = &su->heads[i];
        if (!h->label || (h->evidence == ANDREA_EVIDENCE_PATTERN_ONLY) != pattern_only) continue;
        if (!any) fprintf(out, "%-16s", su->name);
        const char *verdict = andrea_evidence_name(h->evidence);
        fprintf(out, " %d.%d %.3f/%.3f", h->layer, h->head, h->score, h->baseline);
        extra_words(out, su, h);
        if (verdict && !pattern_only) fprintf(out, " %s", verdict);
        any = 1;
    }
    if (any) fputc('\n', out);
    return any;
}

void andrea_summary_write(FILE *out, const andrea_analysis *a) {
    const int nh = a->cfg.n_layer * a->cfg.n_head;
    int pattern_only = 0;
    fprintf(out, "%-16s labelled heads (L.H score/baseline, causal evidence)\n", "class");
    for (int s = 0; s < a->n_suites; s++) {
        if (!class_row(out, &a->suites[s], nh, 0)) fprintf(out, "%-16s -\n", a->suites[s].name);
        for (int i = 0; i < nh; i++) pattern_only += a->suites[s].heads[i].label && a->suites[s].heads[i].evidence ==
                                                                                      ANDREA_EVIDENCE_PATTERN_ONLY;
    }
    if (!pattern_only) return;
    /* apart: labelled by their attention, but the causal check found no use of their output
     * beyond what removing any other head does */
    fprintf(out, "attend like their class, but removing them, alone or with the class's other heads, hurts no more than "
                 "removing other heads (pattern_only):\n");
    for (int s = 0; s < a->n_suites; s++) class_row(out, &a->suites[s], nh, 1);
}
