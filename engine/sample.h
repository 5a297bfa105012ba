/* sample.h — choosing the next token from logits, for `andrea generate`.
 *
 * Job: greedy (temperature 0) or temperature sampling with a seeded, portable RNG.
 * Invariants: the same (logits, temperature, seed) give the same token on every host (splitmix64,
 * softmax in double precision); greedy breaks ties toward the lowest id; the result is always a
 * valid index 0..V-1 (non-finite logits are never chosen while a finite one exists).
 * Failure contract: none; callers pass V >= 1 and temperature >= 0 (the CLI validates them).
 */
#ifndef ANDREA_SAMPLE_H
#define ANDREA_SAMPLE_H

#include <stdint.h>

typedef struct {
    uint64_t state;
} andrea_rng;

void andrea_rng_seed(andrea_rng *r, uint64_t seed);
uint64_t andrea_rng_next(andrea_rng *r);
/* Uniform double in [0, 1). */
double andrea_rng_uniform(andrea_rng *r);

/* Index of the largest logit (lowest id on ties). */
int andrea_sample_greedy(const float *logits, int V);
/* temperature 0 → greedy; otherwise a draw from softmax(logits / temperature). */
int andrea_sample(const float *logits, int V, float temperature, andrea_rng *r);

#endif
