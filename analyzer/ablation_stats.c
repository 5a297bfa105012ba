/* ablation_stats.c — intervals, yardstick and verdicts of the causal check (see ablation_stats.h). */
#include "ablation_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/rng.h"

/* The smallest loss rise called measurable: 0.01 nats, a 1% rise of the perplexity. Below it a
 * head "changes nothing measurable" even when a tight interval sits above zero (float rounding of
 * a 16-item loss is ~1e-6, far below). */
#define MEASURABLE_NATS 0.01
/* Robust z-cut: 3 standard deviations of a normal (1.4826 MAD estimates sigma). */
#define ROBUST_Z 3.0
#define MAD_TO_SIGMA 1.4826

const char *andrea_evidence_name(int evidence) {
    switch (evidence) {
    case ANDREA_EVIDENCE_NECESSARY: return "necessary";
    case ANDREA_EVIDENCE_REDUNDANT: return "redundant";
    case ANDREA_EVIDENCE_PATTERN_ONLY: return "pattern_only";
    default: return NULL;
    }
}

void andrea_boot_draws(int B, uint64_t seed, int *idx) {
    uint64_t state = seed ^ 0x626f6f7473747261ull; /* "bootstra": its own stream of the run's seed */
    for (long r = 0; r < (long)ANDREA_BOOT_DRAWS * B; r++) idx[r] = (int)ae_rng_below(&state, (uint64_t)B);
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The finite values of v sorted into out; returns how many. */
static int sorted_finite(const double *v, int n, double *out) {
    int m = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) out[m++] = v[i];
    qsort(out, (size_t)m, sizeof *out, cmp_double);
    return m;
}

/* q-quantile of sorted s[0..m), linear between order statistics (numpy's default). */
static double quantile_sorted(const double *s, int m, double q) {
    if (m == 0) return NAN;
    const double pos = q * (m - 1);
    const int i = (int)floor(pos);
    return i + 1 < m ? s[i] + (pos - i) * (s[i + 1] - s[i]) : s[m - 1];
}

double andrea_quantile(const double *v, int n, double q, double *scratch) {
    return quantile_sorted(scratch, sorted_finite(v, n, scratch), q);
}

void andrea_boot_effect(const double *d, const double *n, int B, const int *idx, double *scratch, double *effect,
                        double *lo, double *hi) {
    double sd = 0, sn = 0;
    for (int b = 0; b < B; b++) {
        sd += d[b];
        sn += n[b];
    }
    *effect = sn > 0 ? sd / sn : NAN;
    *lo = *hi = NAN;
    if (!(sn > 0) || B < ANDREA_CI_MIN_ITEMS || !isfinite(*effect)) return;
    for (int r = 0; r < ANDREA_BOOT_DRAWS; r++) {
        const int *pick = idx + (size_t)r * B;
        double rd = 0, rn = 0;
        for (int b = 0; b < B; b++) {
            rd += d[pick[b]];
            rn += n[pick[b]];
        }
        scratch[r] = rn > 0 ? rd / rn : NAN; /* a draw of items without positions: left out */
    }
    const int m = sorted_finite(scratch, ANDREA_BOOT_DRAWS, scratch);
    *lo = quantile_sorted(scratch, m, 0.025);
    *hi = quantile_sorted(scratch, m, 0.975);
}

void andrea_median_mad(const double *v, int n, double *scratch, double *median, double *mad) {
    const int m = sorted_finite(v, n, scratch);
    *median = quantile_sorted(scratch, m, 0.5);
    for (int i = 0; i < m; i++) scratch[i] = fabs(scratch[i] - *median);
    qsort(scratch, (size_t)m, sizeof *scratch, cmp_double);
    *mad = quantile_sorted(scratch, m, 0.5);
}

double andrea_percentile_of(double x, const double *v, int n) {
    if (!isfinite(x)) return NAN;
    double below = 0, equal = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(v[i])) continue;
        m++;
        below += v[i] < x;
        equal += v[i] == x;
    }
    return m ? 100.0 * (below + 0.5 * equal) / m : NAN;
}

/* x stands clearly above a distribution of median `med` and MAD `mad`: by ROBUST_Z robust standard
 * deviations and by a measurable amount. */
static int clearly_above(double x, double med, double mad) {
    double margin = ROBUST_Z * MAD_TO_SIGMA * mad;
    if (!(margin > MEASURABLE_NATS)) margin = MEASURABLE_NATS;
    return x > med + margin;
}

int andrea_evidence_verdict(const andrea_verdict_input *in) {
    if (!isfinite(in->ci_low) || !isfinite(in->median) || !isfinite(in->mad)) return ANDREA_EVIDENCE_NONE;
    /* necessary: even the low end of its own interval stands above what removing a typical head does */
    if (clearly_above(in->ci_low, in->median, in->mad)) return ANDREA_EVIDENCE_NECESSARY;
    if (!isfinite(in->group_ci_low) || !isfinite(in->restore_ci_low)) return ANDREA_EVIDENCE_PATTERN_ONLY;
    /* the set: above most random sets of its size (their 80th percentile, so that the one or two
     * random sets that happen to hold an outstanding unrelated head do not decide) and measurably
     * above the typical one. Not by their spread: in a small model any set of k heads holds heads
     * that matter, the random sets' effects spread wide, and no set could stand out by 3 MADs. */
    double bar = in->control_median + MEASURABLE_NATS;
    if (in->n_controls > 0 && in->control_q80 > bar) bar = in->control_q80;
    if (!(in->group_ci_low > (in->n_controls > 0 ? bar : MEASURABLE_NATS))) return ANDREA_EVIDENCE_PATTERN_ONLY;
    /* a set of one is the head alone: above random heads, with nothing backing it up */
    if (in->group_size == 1) return ANDREA_EVIDENCE_NECESSARY;
    /* restores a substantial part alone: a quarter, or half its even share in a bigger set (an
     * additive set of k heads restores ~1/k each; an OR-gate's heads each restore nearly all) */
    const double share = in->group_size > 2 ? 0.5 / in->group_size : 0.25;
    if (in->restore_ci_low > 0 && in->restore >= share * in->group && in->restore > MEASURABLE_NATS)
        return ANDREA_EVIDENCE_REDUNDANT;
    return ANDREA_EVIDENCE_PATTERN_ONLY;
}
