/* ablation_internal.h — what ablation.c (items, classes, statistics) and ablation_run.c (the
 * forwards) share: a group of suites whose items are the same token sequences, the members
 * (suites) in it, and the units (sets of heads) whose removal is measured.
 *
 * A unit's forward gives, per member that reads it, the sum of the member's token losses over each
 * item's loss positions (per-item sums: the intervals resample items). Units:
 *   HEAD    one head (every member reads it; each keeps the deltas of the heads it wants: the
 *           yardstick's heads and its labelled ones)
 *   GROUP   a member's labelled heads together
 *   CONTROL a random set of as many other heads (ANDREA_CONTROL_SETS per member)
 *   LOO     the labelled set without one of its heads (leave-one-in: what that head restores)
 * A GROUP, CONTROL or LOO set of one head that has a HEAD unit runs no forward of its own: it is
 * that forward (its sums are copied from the head's: the member's *_alias). A member whose labelled
 * set equals an earlier member's reads that member's set units (`shares`): same items, same heads
 * removed, so the same forwards.
 * Invariant: every unit of a group runs on the same items and replacement values as the clean
 * forward, so per-item differences of two units are paired. */
#ifndef ANDREA_ABLATION_INTERNAL_H
#define ANDREA_ABLATION_INTERNAL_H

#include "../engine/forward.h"
#include "../probes/probe.h"
#include "ablation.h"
#include "analysis.h"

enum { UNIT_HEAD, UNIT_GROUP, UNIT_CONTROL, UNIT_LOO };

/* A large host buffer kept from group to group of one check (its pages touched, or locked, once):
 * the engine's fast host memory where it has some, else malloc's. */
typedef struct {
    float *p;
    size_t cap; /* floats */
    int from_engine;
} ablation_host_buf;

/* b grown to n floats (contents not kept); NULL when out of memory. */
float *andrea_ablation_host_buf(andrea_engine *e, ablation_host_buf *b, size_t n);
void andrea_ablation_host_buf_free(andrea_engine *e, ablation_host_buf *b);

typedef struct {
    const probe_suite *items;
    const int *pick;        /* [B] its items (token for token the group's) */
    andrea_suite_scores *s;
    unsigned char *use;     /* [B*T] its loss positions */
    unsigned char *want;    /* [NH] single heads whose delta it stores */
    int *labelled, k;       /* its labelled heads [k] */
    int n_controls;         /* random sets drawn (0 when fewer than k other heads) */
    /* the head whose HEAD unit stands for its set of one, or -1 (a unit of its own): the set,
     * each random set [n_controls], each leave-one-in [k] */
    int group_alias, *control_alias, *loo_alias;
    /* an earlier member of the group whose labelled set is this one's, or -1: its set, random
     * sets and leave-one-ins are this member's too (their forwards run once; each member sums
     * the losses over its own positions) */
    int shares;
    /* per-item loss sums over its positions ([B] each): clean, positions, each wanted head
     * ablated [NH*B], the set [B], each control [n_controls*B], each leave-one-in [k*B] */
    double *clean, *npos, *head_sum, *group_sum, *control_sum, *loo_sum;
    /* direct effects (ablation_direct.c): the clean loss by the frozen path [B], and with each
     * labelled head's change carried straight to the logits [k*B] */
    double *direct_clean, *direct_sum;
} ablation_member;

typedef struct {
    int kind, member, index; /* member -1: a HEAD unit (every member that wants it) */
    int first, n;            /* its heads: unit_heads[first .. first + n) */
    int min_layer, order;    /* forwards resume at the unit's lowest layer; order: stable sort */
} ablation_unit;

typedef struct {
    int B, T, n_members;
    ablation_member *m;
    unsigned char *want;     /* [NH] any member's wanted heads */
    unsigned char *in_mean;  /* [NH] the yardstick's heads (the same for every suite) */
    andrea_ablation_method method;
    const andrea_model *model; /* for direct effects (its weights), or NULL: none measured */
    ablation_unit *units;
    int n_units;
    int *unit_heads;
    andrea_ablation_timing *timing; /* or NULL */
    ablation_host_buf *heads_buf, *values_buf; /* the check's, for the clean head outputs and their replacements */
} ablation_group;

/* The clean forward (per-item sums into each member's clean/npos), the replacement values the
 * method needs, and every unit's forwards (per-item sums). tokens/lengths: the items; use: any
 * member's loss positions. */
int andrea_ablation_run_group(andrea_engine *e, const andrea_config *cfg, ablation_group *g, const int *tokens,
                              const int *lengths, const unsigned char *use, uint64_t seed, ae_error *err);

/* The direct effects of every member's labelled heads into direct_clean / direct_sum, from the
 * clean forward's final residual [B, T, C] (valid at the loss rows), head outputs heads
 * [L, B, T, C] and the method's replacements values [L, B, T, C] (NULL: zeros). */
int andrea_ablation_direct(const andrea_model *m, ablation_group *g, const int *tokens, const float *final_resid,
                           const float *heads, const float *values, ae_error *err);

#endif
