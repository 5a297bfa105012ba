/* ablation_stats.h — the statistics of the causal check: intervals over items, the all-heads
 * yardstick, and the verdict of a labelled head (docs/scores.md, "Causal evidence").
 *
 * Job: turn per-item loss sums into effects with a bootstrap interval, place a head among the
 * single-head effects of all heads (median, MAD, percentile: robust to one huge head, which the
 * mean was not), and decide `necessary` / `redundant` / `pattern_only` from a head's own interval,
 * its class set's group effect against random sets of the same size, and what it restores alone.
 * Invariants: an effect is pooled over positions (sum of loss rises over the sum of positions),
 * the same definition as the point estimate; every interval of one suite uses the same bootstrap
 * draws (seeded), so intervals of different heads are comparable and runs reproducible; an
 * interval over fewer than ANDREA_CI_MIN_ITEMS items is NaN (never made up), and so is a verdict
 * that would need it.
 * Failure contract: none; NaN marks what could not be measured. */
#ifndef ANDREA_ABLATION_STATS_H
#define ANDREA_ABLATION_STATS_H

#include <stdint.h>

#define ANDREA_BOOT_DRAWS 1000
#define ANDREA_CI_MIN_ITEMS 8   /* below: C(2n-1, n) distinct resamples is too few for 2.5% tails */
#define ANDREA_CONTROL_SETS 20  /* random sets per class: enough for an 80th percentile that one or two outliers do not move; each costs a forward of the items */

enum { ANDREA_EVIDENCE_NONE = 0, ANDREA_EVIDENCE_NECESSARY, ANDREA_EVIDENCE_REDUNDANT, ANDREA_EVIDENCE_PATTERN_ONLY };

/* "necessary", "redundant", "pattern_only", or NULL for NONE. */
const char *andrea_evidence_name(int evidence);

/* ANDREA_BOOT_DRAWS draws of B item indices with replacement from seed: idx [DRAWS * B]. */
void andrea_boot_draws(int B, uint64_t seed, int *idx);

/* Pooled effect sum(d) / sum(n) over the B items and its 95% percentile interval over the draws
 * (NaN interval when B < ANDREA_CI_MIN_ITEMS; NaN everything when sum(n) == 0). scratch:
 * [ANDREA_BOOT_DRAWS] doubles. */
void andrea_boot_effect(const double *d, const double *n, int B, const int *idx, double *scratch, double *effect,
                        double *lo, double *hi);

/* Median and MAD (median absolute deviation, unscaled) of the finite values among v[0..n); NaN
 * when there is none. scratch: [n] doubles. */
void andrea_median_mad(const double *v, int n, double *scratch, double *median, double *mad);

/* Percentile (0..100) of x among the finite v[0..n): the share below it plus half the share equal
 * to it; NaN when x is NaN or v holds no finite value. */
double andrea_percentile_of(double x, const double *v, int n);

/* q-quantile (0..1, linear between order statistics) of the finite v[0..n); NaN when none.
 * scratch: [n] doubles. */
double andrea_quantile(const double *v, int n, double q, double *scratch);

/* What the verdict of one labelled head reads. */
typedef struct {
    double ci_low;                    /* its own effect's interval, lower end */
    double median, mad;               /* the all-heads yardstick */
    int group_size;                   /* labelled heads of its class (its set) */
    double group_ci_low;              /* the set removed together, lower end */
    double control_median, control_mad, control_q80; /* the random sets of the same size */
    int n_controls;
    double group;                     /* the set's effect */
    double restore, restore_ci_low;   /* what it restores alone: group - (set without it) */
} andrea_verdict_input;

/* The verdict (ANDREA_EVIDENCE_*; NONE when an interval it needs is NaN). The rules and their
 * reasons: docs/scores.md, "Causal evidence". */
int andrea_evidence_verdict(const andrea_verdict_input *in);

#endif
