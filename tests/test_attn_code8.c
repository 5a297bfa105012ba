/* test_attn_code8.c — the report's 8-bit code of probabilities (reports/attn_code8.h): the table
 * rises from 0 to 1; every probability comes back within the stated bounds (a dense sweep, linear
 * and logarithmic); each code is the nearest one; what is not a probability is never read as one. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../reports/attn_code8.h"
#include "check.h"

static void table_rises_from_0_to_1(void) {
    const float *t = andrea_code8_table();
    CHECK(t[0] == 0.0f);
    CHECK(t[1] == 1e-4f);
    CHECK(t[ANDREA_CODE8_NAN - 1] == 1.0f);
    CHECK(isnan(t[ANDREA_CODE8_NAN]));
    int rising = 1;
    for (int j = 1; j < ANDREA_CODE8_NAN; j++) rising &= t[j] > t[j - 1];
    CHECK(rising);
}

/* The worst error over n probabilities, absolute and (from 1e-4) relative; each code also checked
 * to be the nearest. */
static void sweep(const float *p, size_t n, double *worst_abs, double *worst_rel, int *not_nearest) {
    uint8_t *c = malloc(n);
    const float *t = andrea_code8_table();
    if (!c) return;
    andrea_code8_encode_n(c, p, n);
    for (size_t i = 0; i < n; i++) {
        const double e = fabs((double)t[c[i]] - p[i]);
        if (e > *worst_abs) *worst_abs = e;
        if (p[i] >= 1e-4f && e / p[i] > *worst_rel) *worst_rel = e / p[i];
        if ((c[i] > 0 && fabs((double)t[c[i] - 1] - p[i]) < e) ||
            (c[i] + 1 < ANDREA_CODE8_NAN && fabs((double)t[c[i] + 1] - p[i]) < e))
            (*not_nearest)++;
    }
    free(c);
}

static void every_probability_within_the_bounds(void) {
    enum { N = 1 << 20 };
    float *p = malloc(N * sizeof *p);
    double worst_abs = 0, worst_rel = 0;
    int not_nearest = 0;
    CHECK(p != NULL);
    if (!p) return;
    for (int i = 0; i < N; i++) p[i] = (float)i / (N - 1); /* linear, 0 and 1 included */
    sweep(p, N, &worst_abs, &worst_rel, &not_nearest);
    for (int i = 0; i < N; i++) p[i] = (float)pow(10.0, -12.0 + 12.0 * i / (N - 1)); /* 1e-12 .. 1 */
    sweep(p, N, &worst_abs, &worst_rel, &not_nearest);
    free(p);
    CHECK_MSG(worst_abs <= ANDREA_CODE8_ABS, "worst absolute error %.6g", worst_abs);
    CHECK_MSG(worst_rel <= ANDREA_CODE8_REL, "worst relative error %.6g", worst_rel);
    CHECK_MSG(not_nearest == 0, "%d values not given their nearest code", not_nearest);
    /* the bounds are the code's, not loose: its worst cases come within 5 % of them */
    CHECK_MSG(worst_abs > 0.95 * 0.891 / 134 / 2, "worst absolute error %.6g", worst_abs);
    CHECK_MSG(worst_rel > 0.95 * 0.0605 / 2, "worst relative error %.6g", worst_rel);
}

static void what_is_not_a_probability(void) {
    const float in[] = {-0.5f, -0.0f, 2.0f, NAN, INFINITY, -INFINITY, 4e-5f, 6e-5f};
    uint8_t c[8];
    andrea_code8_encode_n(c, in, 8);
    CHECK(c[0] == 0 && c[1] == 0);
    CHECK(c[2] == ANDREA_CODE8_NAN - 1);
    CHECK(c[3] == ANDREA_CODE8_NAN && c[4] == ANDREA_CODE8_NAN && c[5] == ANDREA_CODE8_NAN);
    CHECK(c[6] == 0 && c[7] == 1); /* 5e-5 is the midpoint of 0 and 1e-4 */
}

int main(void) {
    RUN(table_rises_from_0_to_1);
    RUN(every_probability_within_the_bounds);
    RUN(what_is_not_a_probability);
    return check_summary("test_attn_code8");
}
