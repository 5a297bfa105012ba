/* ablation.c — the causal check's items, classes and statistics: rise of a suite's next-token loss
 * when heads' W_O contributions are replaced (one head, a class's set, random sets, leave-one-in);
 * the forwards are ablation_run.c's. */
#include "ablation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/checked_size.h"
#include "../common/rng.h"
#include "../probes/classes.h"
#include "ablation_internal.h"
#include "ablation_stats.h"

/* The class's loss positions (probes/classes.c; a user suite: its target queries) of one item:
 * use[p] = 1 where predicting token p + 1 counts, p + 1 < len. Returns the last such p + 2
 * (the tokens the forward needs), 0 when there is none. use: [len], zeroed here. */
static int loss_positions(const probe_suite *s, const probe_item *it, int len, unsigned char *use) {
    const probe_class *c = andrea_probe_class_find(s->name);
    unsigned char *all = calloc((size_t)(it->n_tokens > 0 ? it->n_tokens : 1), 1);
    memset(use, 0, (size_t)len);
    if (!all) return -1;
    (c ? c->loss_positions : andrea_probe_loss_at_queries)(it, all);
    int need = 0;
    for (int p = 0; p + 1 < len && p + 1 < it->n_tokens; p++)
        if (all[p]) {
            use[p] = 1;
            need = p + 2;
        }
    free(all);
    return need;
}

/* The first max_items items of the suite with at least one loss position into pick[*B], and *T
 * the longest prefix they need. -1: out of memory. */
static int pick_items(const probe_suite *items, int max_items, int *pick, int *B_out, int *T_out) {
    int max_len = 1;
    for (int i = 0; i < items->n_items; i++)
        if (items->items[i].n_tokens > max_len) max_len = items->items[i].n_tokens;
    unsigned char *row = malloc((size_t)max_len);
    if (!row) return -1;
    int B = 0, T = 0;
    for (int i = 0; i < items->n_items && B < max_items; i++) {
        const probe_item *it = &items->items[i];
        /* Causal: tokens after the last loss position's target cannot change its loss. */
        int need = loss_positions(items, it, it->n_tokens, row);
        if (need < 0) {
            free(row);
            return -1;
        }
        if (need == 0) continue;
        pick[B++] = i;
        if (need > T) T = need;
    }
    free(row);
    *B_out = B;
    *T_out = T;
    return 0;
}

const char *andrea_ablation_method_name(andrea_ablation_method m) {
    return m == ANDREA_ABLATION_RESAMPLE ? "resample" : m == ANDREA_ABLATION_ZERO ? "zero" : "mean";
}

int andrea_ablation_method_parse(const char *name, andrea_ablation_method *m) {
    static const andrea_ablation_method all[] = {ANDREA_ABLATION_MEAN, ANDREA_ABLATION_RESAMPLE, ANDREA_ABLATION_ZERO};
    for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(name, andrea_ablation_method_name(all[i]))) {
            *m = all[i];
            return 0;
        }
    return -1;
}

/* A seed of its own for each suite (by name), so its random sets and draws do not depend on
 * which other suites ran or in which order. */
static uint64_t suite_seed(uint64_t seed, const char *name) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 0x100000001b3ull;
    return seed ^ h;
}

/* The units of a group (ablation_internal.h): each wanted head, then per member with labelled
 * heads its set, its random sets and its leave-one-in sets; sorted by lowest layer (stable).
 * -1: out of memory. */
static int cmp_unit(const void *a, const void *b) {
    const ablation_unit *x = a, *y = b;
    return x->min_layer != y->min_layer ? (x->min_layer > y->min_layer) - (x->min_layer < y->min_layer)
                                        : (x->order > y->order) - (x->order < y->order);
}

/* A set unit, or, for a set of one head that has a HEAD unit, that head in *alias (else -1). */
static void add_set_unit(ablation_group *g, int kind, int member, int index, const int *heads, int n, int H, int *alias);

static void add_unit(ablation_group *g, int kind, int member, int index, const int *heads, int n, int H) {
    ablation_unit *u = &g->units[g->n_units];
    int first = g->n_units ? g->units[g->n_units - 1].first + g->units[g->n_units - 1].n : 0, low = 1 << 30;
    for (int i = 0; i < n; i++) {
        g->unit_heads[first + i] = heads[i];
        if (heads[i] / H < low) low = heads[i] / H;
    }
    *u = (ablation_unit){.kind = kind, .member = member, .index = index, .first = first, .n = n, .min_layer = low,
                         .order = g->n_units};
    g->n_units++;
}

static void add_set_unit(ablation_group *g, int kind, int member, int index, const int *heads, int n, int H, int *alias) {
    *alias = n == 1 && g->want[heads[0]] ? heads[0] : -1;
    if (*alias < 0) add_unit(g, kind, member, index, heads, n, H);
}

/* k distinct heads drawn uniformly from those not in the member's set into out. */
static void draw_control(const ablation_member *m, int NH, uint64_t *state, unsigned char *taken, int *out) {
    memset(taken, 0, (size_t)NH);
    for (int j = 0; j < m->k; j++) taken[m->labelled[j]] = 1;
    for (int j = 0; j < m->k; j++) {
        int h;
        do h = (int)ae_rng_below(state, (uint64_t)NH);
        while (taken[h]);
        taken[h] = 1;
        out[j] = h;
    }
}

static int build_units(ablation_group *g, int NH, int H, uint64_t seed) {
    int n_units = 0;
    size_t n_heads = 0;
    for (int i = 0; i < NH; i++) n_units += g->want[i] != 0;
    n_heads = (size_t)n_units;
    for (int k = 0; k < g->n_members; k++) {
        const ablation_member *m = &g->m[k];
        if (m->k == 0 || m->shares >= 0) continue;
        n_units += 1 + m->n_controls + (m->k > 1 ? m->k : 0);
        n_heads += (size_t)m->k * (size_t)(1 + m->n_controls) + (m->k > 1 ? (size_t)m->k * (size_t)(m->k - 1) : 0);
    }
    g->units = malloc(sizeof *g->units * (size_t)(n_units > 0 ? n_units : 1));
    g->unit_heads = malloc(sizeof(int) * (n_heads > 0 ? n_heads : 1));
    int *set = malloc(sizeof(int) * (size_t)NH);
    unsigned char *taken = malloc((size_t)NH);
    if (!g->units || !g->unit_heads || !set || !taken) {
        free(set);
        free(taken);
        return -1;
    }
    for (int i = 0; i < NH; i++)
        if (g->want[i]) add_unit(g, UNIT_HEAD, -1, i, &i, 1, H);
    for (int k = 0; k < g->n_members; k++) {
        const ablation_member *m = &g->m[k];
        if (m->k == 0 || m->shares >= 0) continue;
        uint64_t state = suite_seed(seed, m->s->name) ^ 0x636f6e74726f6c73ull; /* "controls" */
        ablation_member *mw = &g->m[k];
        add_set_unit(g, UNIT_GROUP, k, 0, m->labelled, m->k, H, &mw->group_alias);
        for (int r = 0; r < m->n_controls; r++) {
            draw_control(m, NH, &state, taken, set);
            add_set_unit(g, UNIT_CONTROL, k, r, set, m->k, H, &mw->control_alias[r]);
        }
        for (int j = 0; m->k > 1 && j < m->k; j++) {
            int n = 0;
            for (int x = 0; x < m->k; x++)
                if (x != j) set[n++] = m->labelled[x];
            add_set_unit(g, UNIT_LOO, k, j, set, n, H, &mw->loo_alias[j]);
        }
    }
    qsort(g->units, (size_t)g->n_units, sizeof *g->units, cmp_unit);
    free(set);
    free(taken);
    return 0;
}

/* A member's labelled heads and per-item buffers. -1: out of memory. */
static int member_alloc(ablation_member *m, int NH, int B) {
    /* labelled [NH], then the aliases: control [CONTROL_SETS], leave-one-in [NH] */
    m->labelled = malloc(sizeof(int) * ((size_t)2 * NH + ANDREA_CONTROL_SETS));
    if (!m->labelled) return -1;
    m->control_alias = m->labelled + NH;
    m->loo_alias = m->control_alias + ANDREA_CONTROL_SETS;
    m->group_alias = -1;
    m->k = 0;
    for (int i = 0; i < NH; i++)
        if (m->s->heads[i].label) m->labelled[m->k++] = i;
    m->n_controls = m->k > 0 && NH - m->k >= m->k ? ANDREA_CONTROL_SETS : 0;
    const size_t per = (size_t)B, n = per * (3 + (size_t)NH + 1 + (size_t)m->n_controls + 2 * (size_t)m->k);
    double *all = calloc(n, sizeof(double));
    if (!all) return -1;
    m->clean = all;
    m->npos = m->clean + per;
    m->head_sum = m->npos + per;
    m->group_sum = m->head_sum + per * (size_t)NH;
    m->control_sum = m->group_sum + per;
    m->loo_sum = m->control_sum + per * (size_t)m->n_controls;
    m->direct_clean = m->loo_sum + per * (size_t)m->k;
    m->direct_sum = m->direct_clean + per;
    return 0;
}

static void member_free(ablation_member *m) {
    free(m->labelled);
    free(m->clean);
    m->labelled = NULL;
    m->clean = NULL;
}

/* The pooled effect of a - b per item over the member's positions, without an interval (the random
 * sets and direct effects store none): the same sum(d) / sum(n) as andrea_boot_effect's. */
static double pooled_effect(const ablation_member *m, int B, const double *a, const double *b) {
    double sd = 0, sn = 0;
    for (int i = 0; i < B; i++) {
        sd += a[i] - b[i];
        sn += m->npos[i];
    }
    return sn > 0 ? sd / sn : NAN;
}

/* Effect and interval of a - b per item (b NULL: a alone) over the member's positions. */
static void paired_effect(const ablation_member *m, int B, const double *a, const double *b, const int *draws,
                          double *d, double *scratch, double *effect, double *lo, double *hi) {
    for (int i = 0; i < B; i++) d[i] = a[i] - (b ? b[i] : 0);
    andrea_boot_effect(d, m->npos, B, draws, scratch, effect, lo, hi);
}

/* A member's statistics once its group ran (ablation_stats.h): each wanted head's delta, interval
 * and percentile; the yardstick; the set, its random sets, each labelled head's leave-one-in and
 * verdict. scratch: [DRAWS + NH + CONTROL_SETS + B] doubles, draws [DRAWS * B]. */
static void member_stats(const ablation_group *g, ablation_member *m, int NH, const int *draws, double *scratch) {
    andrea_suite_scores *s = m->s;
    const int B = g->B;
    /* v: the yardstick's deltas [NH], then the random sets' effects [n_controls] */
    double *boot = scratch, *v = boot + ANDREA_BOOT_DRAWS, *d = v + NH + ANDREA_CONTROL_SETS, sum = 0;
    int n = 0;
    for (int i = 0; i < NH; i++) {
        andrea_head_score *h = &s->heads[i];
        if (!m->want[i]) continue;
        paired_effect(m, B, m->head_sum + (size_t)i * B, m->clean, draws, d, boot, &h->ablation_delta,
                      &h->ablation_ci_low, &h->ablation_ci_high);
    }
    for (int i = 0; i < NH; i++) {
        v[i] = g->in_mean[i] ? s->heads[i].ablation_delta : NAN;
        if (g->in_mean[i]) sum += s->heads[i].ablation_delta, n++;
    }
    s->ablation_mean = n ? sum / n : NAN;
    for (int i = 0; i < NH; i++)
        if (m->want[i]) s->heads[i].ablation_pct = andrea_percentile_of(s->heads[i].ablation_delta, v, NH);
    andrea_median_mad(v, NH, boot, &s->ablation_median, &s->ablation_mad);
    s->group_size = m->k;
    s->n_controls = m->n_controls;
    if (m->k == 0) return;
    paired_effect(m, B, m->group_sum, m->clean, draws, d, boot, &s->group_delta, &s->group_ci_low, &s->group_ci_high);
    for (int r = 0; r < m->n_controls; r++) v[r] = pooled_effect(m, B, m->control_sum + (size_t)r * B, m->clean);
    andrea_median_mad(v, m->n_controls, boot, &s->control_median, &s->control_mad);
    s->control_q80 = andrea_quantile(v, m->n_controls, 0.8, boot);
    s->control_max = andrea_quantile(v, m->n_controls, 1.0, boot);
    for (int j = 0; j < m->k; j++) {
        andrea_head_score *h = &s->heads[m->labelled[j]];
        /* what it restores alone: the set's loss minus the loss with it kept (k == 1: nothing removed) */
        const double *kept = m->k > 1 ? m->loo_sum + (size_t)j * B : m->clean;
        paired_effect(m, B, m->group_sum, kept, draws, d, boot, &h->restore_delta, &h->restore_ci_low, &h->restore_ci_high);
        if (g->model) h->direct_delta = pooled_effect(m, B, m->direct_sum + (size_t)j * B, m->direct_clean);
        const andrea_verdict_input in = {
            .ci_low = h->ablation_ci_low, .median = s->ablation_median, .mad = s->ablation_mad, .group_size = m->k,
            .group_ci_low = s->group_ci_low, .control_median = s->control_median, .control_mad = s->control_mad,
            .control_q80 = s->control_q80, .n_controls = m->n_controls, .group = s->group_delta,
            .restore = h->restore_delta, .restore_ci_low = h->restore_ci_low};
        h->evidence = andrea_evidence_verdict(&in);
    }
}

/* The sums of a member's sets of one head that ran no forward of their own: their head's. */
static void copy_aliases(ablation_member *m, int B) {
    const size_t row = sizeof(double) * (size_t)B;
    if (m->k == 0) return;
    if (m->group_alias >= 0) memcpy(m->group_sum, m->head_sum + (size_t)m->group_alias * B, row);
    for (int r = 0; r < m->n_controls; r++)
        if (m->control_alias[r] >= 0) memcpy(m->control_sum + (size_t)r * B, m->head_sum + (size_t)m->control_alias[r] * B, row);
    for (int j = 0; m->k > 1 && j < m->k; j++)
        if (m->loo_alias[j] >= 0) memcpy(m->loo_sum + (size_t)j * B, m->head_sum + (size_t)m->loo_alias[j] * B, row);
}

/* Member k reads the set units of the first earlier member with the same labelled set (positional
 * and prev_token often label the same heads on the same windows): its aliases are that member's. */
static void share_sets(ablation_group *g, int k) {
    ablation_member *m = &g->m[k];
    m->shares = -1;
    for (int j = 0; j < k && m->k > 0; j++) {
        const ablation_member *o = &g->m[j];
        if (o->shares >= 0 || o->k != m->k || memcmp(o->labelled, m->labelled, sizeof(int) * (size_t)m->k)) continue;
        m->shares = j;
        return;
    }
}

/* After build_units: a sharing member's sets of one head are aliased as its model's. */
static void share_aliases(ablation_group *g, int NH) {
    for (int k = 0; k < g->n_members; k++) {
        ablation_member *m = &g->m[k];
        if (m->shares < 0) continue;
        const ablation_member *o = &g->m[m->shares];
        m->group_alias = o->group_alias;
        memcpy(m->control_alias, o->control_alias, sizeof(int) * ANDREA_CONTROL_SETS);
        memcpy(m->loo_alias, o->loo_alias, sizeof(int) * (size_t)NH);
    }
}

/* The group's items (token for token those of every member), each member's loss positions,
 * wanted heads and labelled set; its units; then its forwards and each member's statistics. */
static int ablate_group(andrea_engine *e, const andrea_config *cfg, ablation_group *g, uint64_t seed, ae_error *err) {
    const int NH = cfg->n_layer * cfg->n_head, B = g->B, T = g->T;
    const size_t bt = (size_t)B * (size_t)T;
    int *tokens = calloc(bt, sizeof(int)), *lengths = calloc((size_t)B, sizeof(int));
    unsigned char *use = calloc(bt, 1), *uses = calloc(bt, (size_t)g->n_members);
    unsigned char *wants = calloc((size_t)NH, (size_t)g->n_members);
    int *draws = malloc(sizeof(int) * (size_t)ANDREA_BOOT_DRAWS * (size_t)B);
    double *scratch = malloc(sizeof(double) * ((size_t)ANDREA_BOOT_DRAWS + (size_t)NH + ANDREA_CONTROL_SETS + (size_t)B));
    int ret = -1;
    if (!tokens || !lengths || !use || !uses || !wants || !draws || !scratch) goto oom;
    for (int b = 0; b < B; b++) {
        const probe_item *it = &g->m[0].items->items[g->m[0].pick[b]];
        int len = it->n_tokens < T ? it->n_tokens : T;
        memcpy(tokens + (size_t)b * T, it->tokens, sizeof(int) * (size_t)len);
        lengths[b] = len;
    }
    for (int k = 0; k < g->n_members; k++) {
        ablation_member *m = &g->m[k];
        m->use = uses + (size_t)k * bt;
        m->want = wants + (size_t)k * NH;
        for (int b = 0; b < B; b++)
            if (loss_positions(m->items, &m->items->items[m->pick[b]], lengths[b], m->use + (size_t)b * T) < 0) goto oom;
        for (size_t r = 0; r < bt; r++) use[r] |= m->use[r];
        for (int i = 0; i < NH; i++) g->want[i] |= m->want[i] = g->in_mean[i] || m->s->heads[i].label;
        if (member_alloc(m, NH, B)) goto oom;
    }
    for (int k = 0; k < g->n_members; k++) share_sets(g, k);
    if (build_units(g, NH, cfg->n_head, seed)) goto oom;
    share_aliases(g, NH);
    if (andrea_ablation_run_group(e, cfg, g, tokens, lengths, use, seed, err)) goto out;
    for (int k = 0; k < g->n_members; k++) copy_aliases(&g->m[k], B);
    for (int k = 0; k < g->n_members; k++) {
        andrea_boot_draws(B, suite_seed(seed, g->m[k].s->name), draws);
        g->m[k].s->n_ablation_items = B;
        double clean = 0, npos = 0;
        for (int b = 0; b < B; b++) clean += g->m[k].clean[b], npos += g->m[k].npos[b];
        g->m[k].s->clean_loss = npos > 0 ? clean / npos : NAN;
        member_stats(g, &g->m[k], NH, draws, scratch);
    }
    ret = 0;
    goto out;
oom:
    ret = andrea_fail(err, "%s: out of memory for the causal check", g->m[0].s->name);
out:
    for (int k = 0; k < g->n_members; k++) member_free(&g->m[k]);
    free(g->units);
    free(g->unit_heads);
    g->units = NULL;
    g->unit_heads = NULL;
    g->n_units = 0;
    free(tokens);
    free(lengths);
    free(use);
    free(uses);
    free(wants);
    free(draws);
    free(scratch);
    return ret;
}

/* Whether suites a and b picked the same items, token for token. */
static int same_items(const probe_suite *a, const int *pick_a, int B_a, const probe_suite *b, const int *pick_b, int B_b) {
    if (B_a != B_b) return 0;
    for (int k = 0; k < B_a; k++)
        if (!andrea_probe_item_same_tokens(&a->items[pick_a[k]], &b->items[pick_b[k]])) return 0;
    return 1;
}

void andrea_ablation_mean_heads(int NH, unsigned char *in_mean) {
    /* Past ANDREA_ABLATE_MEAN_HEADS an even spread bounds the cost on big models: head
     * floor(k NH / M) for k < M is M distinct heads (NH > M) from every part of the model. A
     * stride of ceil(NH / M) took fewer (36 of 72, 48 of 144) and, with an even stride, never an
     * odd head of a layer. */
    const long M = ANDREA_ABLATE_MEAN_HEADS;
    memset(in_mean, 0, (size_t)(NH > 0 ? NH : 0));
    if (NH <= M)
        memset(in_mean, 1, (size_t)(NH > 0 ? NH : 0));
    else
        for (long k = 0; k < M; k++) in_mean[k * NH / M] = 1;
}

/* Refuses a check too large to hold (logits, or the clean forward's head outputs that mean and
 * resample replace from). */
static int check_size(const andrea_config *cfg, const andrea_ablation_options *o, const char *name, int B, int T,
                      ae_error *err) {
    size_t bt, btv, btcl;
    if (ae_mul((size_t)B, (size_t)T, &bt) || ae_mul(bt, (size_t)cfg->vocab_size, &btv) ||
        btv > ((size_t)1 << 34) / sizeof(float))
        return andrea_fail(err, "%s: causal check too large (%d items x %d tokens x vocab %d)", name, B, T, cfg->vocab_size);
    if (o->method != ANDREA_ABLATION_ZERO &&
        (ae_mul(bt, (size_t)cfg->d_model, &btcl) || ae_mul(btcl, (size_t)cfg->n_layer, &btcl) || btcl > ((size_t)1 << 29)))
        return andrea_fail(err, "%s: the %s ablation of %d items x %d tokens needs more than 4 GiB of head outputs and "
                                "their replacements; give "
                                "fewer --ablate-items or --ablation zero", name, andrea_ablation_method_name(o->method), B, T);
    return 0;
}

/* The suites' groups: leader[s] = the first suite whose picked items are s's, token for token. */
static void find_leaders(const probe_suite *suites, int n_suites, const int *pick, int per, const int *Bs, int *leader) {
    for (int s = 0; s < n_suites; s++) {
        leader[s] = s;
        for (int t = 0; t < s && Bs[s] > 0; t++)
            if (leader[t] == t && same_items(&suites[t], pick + (size_t)t * per, Bs[t], &suites[s], pick + (size_t)s * per, Bs[s])) {
                leader[s] = t;
                break;
            }
    }
}

int andrea_ablation_suites(andrea_engine *e, const andrea_config *cfg, const probe_suite *suites, int n_suites,
                           const andrea_ablation_options *o, andrea_suite_scores *scores, char *note, size_t cap,
                           ae_progress *prog, ae_error *err) {
    const int NH = cfg->n_layer * cfg->n_head, max_items = o->max_items, per = max_items > 0 ? max_items : 1;
    const int n = n_suites > 0 ? n_suites : 1;
    int *pick = malloc(sizeof(int) * (size_t)per * (size_t)n), *Bs = calloc((size_t)n, sizeof(int));
    int *Ts = calloc((size_t)n, sizeof(int)), *leader = calloc((size_t)n, sizeof(int));
    ablation_member *members = calloc((size_t)n, sizeof *members);
    unsigned char *in_mean = calloc((size_t)NH, 1), *want = calloc((size_t)NH, 1);
    ablation_host_buf heads_buf = {NULL, 0, 0}, values_buf = {NULL, 0, 0};
    char line[256];
    int ret = -1;
    if (!pick || !Bs || !Ts || !leader || !members || !in_mean || !want) {
        ret = andrea_fail(err, "causal check: out of memory");
        goto out;
    }
    andrea_ablation_mean_heads(NH, in_mean);
    for (int s = 0; s < n_suites; s++) {
        andrea_suite_causal_clear(&scores[s], NH);
        /* The first max_items items with at least one loss position. */
        if (pick_items(&suites[s], max_items, pick + (size_t)s * per, &Bs[s], &Ts[s])) {
            ret = andrea_fail(err, "%s: out of memory", scores[s].name);
            goto out;
        }
        if (check_size(cfg, o, scores[s].name, Bs[s], Ts[s], err)) goto out;
        if (o->method != ANDREA_ABLATION_ZERO && Bs[s] == 1) { /* no other item to take outputs from */
            snprintf(line, sizeof line, "no causal check for %.63s: %s ablation needs 2 items, it has 1", scores[s].name,
                     andrea_ablation_method_name(o->method));
            andrea_note_append(note, cap, line);
            Bs[s] = 0;
        }
    }
    find_leaders(suites, n_suites, pick, per, Bs, leader);
    for (int s = 0; s < n_suites; s++) {
        if (leader[s] != s || Bs[s] == 0) continue;
        ablation_group g = {.B = Bs[s], .m = members, .want = want, .in_mean = in_mean, .method = o->method,
                            .model = o->model, .timing = o->timing,
                            .heads_buf = &heads_buf, .values_buf = &values_buf};
        memset(want, 0, (size_t)NH);
        for (int t = s; t < n_suites; t++)
            if (leader[t] == s) {
                g.m[g.n_members++] = (ablation_member){.items = &suites[t], .pick = pick + (size_t)t * per, .s = &scores[t]};
                if (Ts[t] > g.T) g.T = Ts[t]; /* the longest prefix a member needs */
            }
        if (ablate_group(e, cfg, &g, o->seed, err)) goto out;
        if (prog) andrea_progress_add(prog, (uint64_t)g.n_members);
    }
    ret = 0;
out:
    free(pick);
    free(Bs);
    free(Ts);
    free(leader);
    free(members);
    free(in_mean);
    free(want);
    andrea_ablation_host_buf_free(e, &heads_buf);
    andrea_ablation_host_buf_free(e, &values_buf);
    return ret;
}

int andrea_ablation_suite(andrea_engine *e, const andrea_config *cfg, const probe_suite *items, int max_items,
                          andrea_suite_scores *s, ae_error *err) {
    const andrea_ablation_options o = {.method = ANDREA_ABLATION_MEAN, .seed = 0, .max_items = max_items};
    return andrea_ablation_suites(e, cfg, items, 1, &o, s, NULL, 0, NULL, err);
}
