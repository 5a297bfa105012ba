/* sample.c — next-token choice (see sample.h). */
#include "sample.h"

#include <math.h>
#include "../common/rng.h"

void andrea_rng_seed(andrea_rng *r, uint64_t seed) { r->state = seed; }

uint64_t andrea_rng_next(andrea_rng *r) { return ae_splitmix64(&r->state); }

double andrea_rng_uniform(andrea_rng *r) { return (double)(andrea_rng_next(r) >> 11) * 0x1.0p-53; }

int andrea_sample_greedy(const float *logits, int V) {
    int best = 0;
    for (int v = 0; v < V; v++) {
        /* the first finite logit replaces a non-finite start; later ones only when strictly larger */
        if (!isfinite(logits[best]) && isfinite(logits[v])) best = v;
        else if (isfinite(logits[v]) && logits[v] > logits[best]) best = v;
    }
    return best;
}

int andrea_sample(const float *logits, int V, float temperature, andrea_rng *r) {
    const int best = andrea_sample_greedy(logits, V);
    if (!(temperature > 0.0f) || !isfinite(logits[best])) return best;
    /* softmax((l - max) / temperature) in double; the largest term is exp(0) = 1, so sum >= 1 */
    const double mx = logits[best], inv_t = 1.0 / temperature;
    double sum = 0;
    for (int v = 0; v < V; v++)
        if (isfinite(logits[v])) sum += exp((logits[v] - mx) * inv_t);
    const double u = andrea_rng_uniform(r) * sum;
    double acc = 0;
    int last = best;
    for (int v = 0; v < V; v++) {
        if (!isfinite(logits[v])) continue;
        acc += exp((logits[v] - mx) * inv_t);
        last = v;
        if (u < acc) return v;
    }
    return last; /* u rounded up to the total: the last finite token */
}
