/* weights_evidence.c — the weights' part of the successor and copy_suppression classes (see
 * weights_evidence.h). */
#include "weights_evidence.h"

#include "ov_classes.h"

static int needs_weights(const andrea_suite_scores *su) {
    const probe_class *c = su->pass ? su->pass->cls : NULL;
    return c && (c->score == PROBE_SCORE_WEIGHTS || c->extra == PROBE_EXTRA_WEIGHTS);
}

int andrea_weights_evidence(const andrea_model *m, const andrea_tokenizer *tok, andrea_analysis *a, ae_error *err) {
    int any = 0;
    for (int s = 0; s < a->n_suites; s++) any |= needs_weights(&a->suites[s]);
    if (!any) return 0;
    andrea_ov_classes ov;
    if (andrea_ov_classes_compute(m, tok, &ov, err)) return -1;
    const int NH = m->cfg.n_layer * m->cfg.n_head;
    for (int s = 0; s < a->n_suites; s++) {
        andrea_suite_scores *su = &a->suites[s];
        if (!needs_weights(su)) continue;
        const probe_class *c = su->pass->cls;
        for (int h = 0; h < NH; h++) {
            andrea_head_score *x = &su->heads[h];
            if (c->score == PROBE_SCORE_WEIGHTS) {
                x->score = ov.successor[h];
                x->baseline = x->control = ov.successor_chance;
            }
            if (c->extra == PROBE_EXTRA_WEIGHTS) x->extra = ov.suppression[h];
        }
        andrea_pass_suite_finish(su->pass, &su->rule, su->heads, NH);
    }
    andrea_ov_classes_free(&ov);
    return 0;
}
