/* rng.h — the one pseudo-random generator of the tool: splitmix64 (Steele, Lea, Flood 2014).
 * Tiny, portable and well mixed (passes BigCrush); never libc rand(), because probe items, control
 * keys and sampled tokens must be reproducible bit for bit across runs and machines.
 * Invariant: the same state gives the same sequence everywhere; no hidden global state. */
#ifndef ANDREA_RNG_H
#define ANDREA_RNG_H

#include <stdint.h>

/* Advances *state and returns the next 64 random bits. */
static inline uint64_t ae_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0: rejection sampling, so no modulo bias. */
static inline uint64_t ae_rng_below(uint64_t *state, uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = ae_splitmix64(state);
    while (x >= limit);
    return x % n;
}

#endif
