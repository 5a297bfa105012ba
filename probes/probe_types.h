/* probe_types.h — the data of a probe suite: items, their (query, key) targets, the generation
 * options. Types only, so the class table (classes.h) and the generators' helpers
 * (probe_internal.h) describe suites without depending on the loaders (probe.h). Invariants: probe.h.
 */
#ifndef ANDREA_PROBE_TYPES_H
#define ANDREA_PROBE_TYPES_H

#include <stdint.h>

typedef struct {
    int query, key;
} probe_target;

typedef struct {
    int *tokens;
    int n_tokens;
    probe_target *targets;
    int n_targets;
    int *entities;   /* [n_entities, 2] token spans [start, end), entity items only (else NULL) */
    int n_entities;
} probe_item;

typedef struct {
    char name[64];      /* suite = class name */
    char source[4096];  /* "builtin" or the probe file path (whole: a path the system opened fits) */
    uint64_t seed;      /* generator seed (0 for files) */
    probe_item *items;
    int n_items;
    int max_len;        /* longest item */
    int map_only;       /* 1: a suite of texts without targets and without a class (a probe file's
                           suite whose items give no targets, or --texts): its maps are dumped
                           and shown, nothing is scored (classify skips it) */
} probe_suite;

typedef struct {
    int n_items;        /* sequences to generate (0 = the suite's default) */
    int seq_len;        /* target length in tokens (0 = default, clipped to the model's max) */
    uint64_t seed;      /* 0 = default seed */
} probe_options;

/* Defaults (docs/probes.md): 32 items of 128 tokens per suite keep `andrea analyze` of a small
 * byte-level model well under a minute on 2 CPU cores. */
#define PROBE_DEFAULT_N_ITEMS 32
#define PROBE_DEFAULT_SEQ_LEN 128
#define PROBE_DEFAULT_SEED 1729u
/* ... except entity: 24 items of 192 tokens (see probe_builtin.c) */
#define PROBE_ENTITY_N_ITEMS 24
#define PROBE_ENTITY_SEQ_LEN 192
/* ... and retrieval: 16 needle-in-a-haystack items at the model's context (clipped to it) */
#define PROBE_RETRIEVAL_N_ITEMS 16
#define PROBE_RETRIEVAL_SEQ_LEN 1024
/* ... and successor: 16 runs of ordinals (a kind each, in turn), at most 64 tokens */
#define PROBE_SUCCESSOR_N_ITEMS 16
#define PROBE_SUCCESSOR_SEQ_LEN 64
#define PROBE_MAX_ITEMS 1000000

#endif
