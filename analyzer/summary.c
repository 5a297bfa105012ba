/* summary.c — the per-class table of labelled heads (see summary.h). */
#include "summary.h"

void andrea_summary_write(FILE *out, const andrea_analysis *a) {
    int nh = a->cfg.n_layer * a->cfg.n_head;
    fprintf(out, "%-12s labelled heads (L.H score/baseline)\n", "class");
    for (int s = 0; s < a->n_suites; s++) {
        const andrea_suite_scores *su = &a->suites[s];
        fprintf(out, "%-12s", su->name);
        int any = 0;
        for (int i = 0; i < nh; i++) {
            const andrea_head_score *h = &su->heads[i];
            if (!h->label) continue;
            fprintf(out, " %d.%d %.3f/%.3f", h->layer, h->head, h->score, h->baseline);
            any = 1;
        }
        fprintf(out, "%s\n", any ? "" : " -");
    }
}
