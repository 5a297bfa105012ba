/* score.c — score / baseline / control accumulation (see score.h, docs/scores.md). */
#include "score.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/checked_size.h"
#include "../common/half.h"
#include "../common/rng.h"
#include "../probes/classes.h"


/* Robert Floyd's sampling: k distinct values from [0, n), each k-subset equally likely. */
static void draw_distinct(uint64_t *s, int n, int k, int *out) {
    int m = 0;
    for (int j = n - k; j < n; j++) {
        int t = (int)ae_rng_below(s, (uint64_t)j + 1), seen = 0;
        for (int i = 0; i < m; i++)
            if (out[i] == t) seen = 1;
        out[m++] = seen ? j : t;
    }
}

/* Query i's keys, grouped as the plan holds them (ascending): the nearest is the last. */
static int nearest_key(const score_seq_plan *p, int i) {
    return p->keys[p->queries[i].key_off + p->queries[i].n_keys - 1];
}

/* Control keys that keep the targets' distance (PROBE_CONTROL_SAME_DISTANCE): query i's target
 * keys shifted together so that the nearest sits at the distance e' that a query j of the same
 * item, drawn uniformly among those where the shifted keys stay in [0, q], has to its own nearest
 * target. e' follows the item's distribution of target distances, so a head that attends by
 * distance alone puts as much mass on the control as on the targets (the margin is ~0 whatever
 * its distance profile), while a head that finds the targets by content does not. j = i is
 * always allowed (shift 0: the control equals the targets, which only lowers the margin). */
static void control_same_distance(score_seq_plan *p, int i, uint64_t *s) {
    const score_query *sq = &p->queries[i];
    const int e = sq->query - nearest_key(p, i), lowest = p->keys[sq->key_off];
    int fits = 0;
    for (int j = 0; j < p->n_queries; j++)
        if (p->queries[j].query - nearest_key(p, j) <= e + lowest) fits++;
    int pick = (int)ae_rng_below(s, (uint64_t)fits), shift = 0;
    for (int j = 0; j < p->n_queries; j++) {
        int ej = p->queries[j].query - nearest_key(p, j);
        if (ej <= e + lowest && pick-- == 0) {
            shift = ej - e;
            break;
        }
    }
    for (int k = 0; k < sq->n_keys; k++) p->control_keys[sq->key_off + k] = p->keys[sq->key_off + k] - shift;
}

/* The class's hard queries (probes/classes.c), for its extra statistic. */
static int mark_hard(const probe_item *it, int seq, const char *suite, score_seq_plan *p, ae_error *err) {
    const probe_class *c = andrea_probe_class_find(suite);
    if (!c || !c->hard || p->n_queries == 0) return 0;
    unsigned char *hard = calloc((size_t)it->n_tokens, 1);
    if (!hard) {
        andrea_score_plan_free(p);
        return andrea_fail(err, "%s: item %d: out of memory", suite, seq);
    }
    c->hard(it, hard);
    for (int i = 0; i < p->n_queries; i++) p->queries[i].hard = hard[p->queries[i].query];
    free(hard);
    return 0;
}

void andrea_score_plan_free(score_seq_plan *p) {
    free(p->queries);
    free(p->keys);
    free(p->control_keys);
    memset(p, 0, sizeof *p);
}

int andrea_score_plan_build(const probe_item *it, int seq, const char *suite, score_seq_plan *p,
                     ae_error *err) {
    memset(p, 0, sizeof *p);
    p->length = it->n_tokens;
    if (it->n_targets <= 0) return 0;
    size_t nq_bytes, nk_bytes;
    if (ae_mul((size_t)it->n_targets, sizeof(score_query), &nq_bytes) ||
        ae_mul((size_t)it->n_targets, sizeof(int), &nk_bytes))
        return andrea_fail(err, "%s: item %d: too many targets", suite, seq);
    p->queries = malloc(nq_bytes);
    p->keys = malloc(nk_bytes);
    p->control_keys = malloc(nk_bytes);
    if (!p->queries || !p->keys || !p->control_keys) {
        andrea_score_plan_free(p);
        return andrea_fail(err, "%s: item %d: out of memory", suite, seq);
    }
    /* Targets arrive sorted by query then key (probe.h invariant); group them per query. */
    for (int i = 0; i < it->n_targets; i++) {
        int q = it->targets[i].query, k = it->targets[i].key;
        if (q < 0 || q >= it->n_tokens || k < 0 || k > q) {
            andrea_score_plan_free(p);
            return andrea_fail(err, "%s: item %d: target (query %d, key %d) outside the causal window of a %d-token item",
                           suite, seq, q, k, it->n_tokens);
        }
        if (p->n_queries == 0 || p->queries[p->n_queries - 1].query != q) {
            if (p->n_queries > 0 && p->queries[p->n_queries - 1].query > q) {
                andrea_score_plan_free(p);
                return andrea_fail(err, "%s: item %d: targets are not sorted by query", suite, seq);
            }
            score_query *sq = &p->queries[p->n_queries++];
            sq->query = q;
            sq->n_keys = 0;
            sq->key_off = p->n_keys;
            sq->hard = 0;
        }
        p->queries[p->n_queries - 1].n_keys++;
        p->keys[p->n_keys++] = k;
    }
    const probe_class *c = andrea_probe_class_find(suite);
    int same_distance = c && c->control == PROBE_CONTROL_SAME_DISTANCE;
    for (int i = 0; i < p->n_queries; i++) {
        score_query *sq = &p->queries[i];
        p->baseline_sum += (double)sq->n_keys / (double)(sq->query + 1);
        for (int k = 1; k <= ANDREA_POS_MAX_OFFSET && k <= sq->query; k++) p->offset_base[k] += 1.0 / (double)(sq->query + 1);
        uint64_t s = ANDREA_CONTROL_SEED ^ ((uint64_t)(uint32_t)seq << 32) ^ (uint64_t)(uint32_t)sq->query;
        ae_splitmix64(&s);
        if (same_distance)
            control_same_distance(p, i, &s);
        else
            draw_distinct(&s, sq->query + 1, sq->n_keys, p->control_keys + sq->key_off);
    }
    return mark_hard(it, seq, suite, p, err);
}

/* One eligible query i of plan p, its attention row `row` ([>= q + 1] keys). */
static void add_row(score_acc *a, const score_seq_plan *p, int i, const float *row) {
    const score_query *sq = &p->queries[i];
    double s = 0, c = 0;
    for (int j = 0; j < sq->n_keys; j++) {
        s += row[p->keys[sq->key_off + j]];
        c += row[p->control_keys[sq->key_off + j]];
    }
    int best = 0;
    for (int k = 1; k <= sq->query; k++)
        if (row[k] > row[best]) best = k;
    int hit = 0, control_hit = 0;
    for (int j = 0; j < sq->n_keys; j++) {
        if (p->keys[sq->key_off + j] == best) hit = 1;
        if (p->control_keys[sq->key_off + j] == best) control_hit = 1;
    }
    a->score_sum += s;
    a->control_sum += c;
    a->top1_sum += hit;
    a->control_top1_sum += control_hit;
    if (sq->hard) a->hard_top1_sum += hit;
    const int offset = sq->query - best;
    if (offset >= 1 && offset <= ANDREA_POS_MAX_OFFSET) a->offset_hits[offset] += 1;
}

void andrea_score_acc_add_plan(score_acc *a, const score_seq_plan *p) {
    a->baseline_sum += p->baseline_sum;
    for (int k = 1; k <= ANDREA_POS_MAX_OFFSET; k++) a->offset_base[k] += p->offset_base[k];
    a->n += p->n_queries;
    for (int i = 0; i < p->n_queries; i++) a->n_hard += p->queries[i].hard != 0;
}

void andrea_score_acc_add(score_acc *a, const score_seq_plan *p, const float *map, int T) {
    for (int i = 0; i < p->n_queries; i++) add_row(a, p, i, map + (size_t)p->queries[i].query * (size_t)T);
    andrea_score_acc_add_plan(a, p);
}

void andrea_score_acc_add_f16(score_acc *a, const score_seq_plan *p, const uint16_t *map, int T, float *row) {
    for (int i = 0; i < p->n_queries; i++) {
        const int q = p->queries[i].query;
        const uint16_t *src = map + (size_t)q * (size_t)T;
        andrea_f16_to_f32_n(row, src, (size_t)q + 1);
        add_row(a, p, i, row);
    }
    andrea_score_acc_add_plan(a, p);
}

static double mean(double s, int64_t n) { return n > 0 ? s / (double)n : NAN; }
/* A mean of attention masses, each at most 1 but for the rounding of the maps (fp16 maps: a row
 * whose targets cover its whole window sums to 1.0002): a fraction, so at most 1. */
static double fraction(double m) { return m > 1.0 ? 1.0 : m; }
double andrea_score_acc_score(const score_acc *a) { return fraction(mean(a->score_sum, a->n)); }
double andrea_score_acc_baseline(const score_acc *a) { return mean(a->baseline_sum, a->n); }
double andrea_score_acc_control(const score_acc *a) { return fraction(mean(a->control_sum, a->n)); }
double andrea_score_acc_top1(const score_acc *a) { return mean(a->top1_sum, a->n); }
double andrea_score_acc_hard_top1(const score_acc *a) { return mean(a->hard_top1_sum, a->n_hard); }

score_offset andrea_score_acc_offset(const score_acc *a) {
    score_offset o = {0, NAN, NAN, NAN};
    if (a->n <= 0) return o;
    o.offset = 1;
    for (int k = 2; k <= ANDREA_POS_MAX_OFFSET; k++)
        if (a->offset_hits[k] > a->offset_hits[o.offset]) o.offset = k;
    o.share = mean(a->offset_hits[o.offset], a->n);
    o.baseline = mean(a->offset_base[o.offset], a->n);
    o.control = mean(a->control_top1_sum, a->n);
    return o;
}
