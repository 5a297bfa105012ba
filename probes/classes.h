/* classes.h — the head classes: one table entry per class (docs/probes.md, docs/scores.md).
 *
 * Job: say, for each built-in class, everything that is particular to it: its name, the generator
 * of its built-in suite, its default target rule, its extra statistic (which queries are "hard"),
 * where its causal check measures the loss, and its default label rule. The analyzer (score.c,
 * pass.c, ablation.c) reads this table and holds no per-class code; adding a class touches
 * classes.c and tests/test_classes.c only. A suite whose name is not in the table (a user suite)
 * gets the generic behaviour: its explicit targets, top-1 as extra statistic, the loss at its
 * target queries.
 * Invariants: names are unique; every entry has a generator and a target rule; rule thresholds
 * are finite. Rules that mark positions fill a caller-zeroed [n_tokens] byte array, never write
 * outside it and never fail (an item without what the rule needs gets no marks).
 * Failure contract: target rules return -1 with err filled (allocation, or a text rule without a
 * tokenizer); the item is then left without targets.
 */
#ifndef ANDREA_CLASSES_H
#define ANDREA_CLASSES_H

#include "../common/error.h"
#include "../tokenizer/tokenizer.h"
#include "probe_types.h"

/* A head is labelled with a class when ALL hold (docs/scores.md):
 *   score >= min_score, score / baseline >= min_ratio, score - control >= min_margin, and, for a
 *   class with an extra statistic, extra >= min_extra when min_extra > 0 and extra <= max_extra
 *   when max_extra > 0 (dormant: the output norm must be small). */
typedef struct {
    double min_score, min_ratio, min_margin, min_extra, max_extra;
} probe_label_rule;

/* Where a class's score, baseline and control come from (docs/scores.md). */
typedef enum {
    PROBE_SCORE_MASS,    /* attention mass on the targets (score.h): every class but those below */
    PROBE_SCORE_OFFSET,  /* positional: the share of queries whose argmax sits at the head's most
                            frequent relative offset (score.h's score_offset) */
    PROBE_SCORE_WEIGHTS, /* successor: from the weights alone (analyzer/ov_classes.h), filled after
                            the forwards; the suite's items serve the maps and the causal check */
} probe_score_kind;

typedef enum {
    PROBE_EXTRA_NONE,      /* no statistic beyond the mass */
    PROBE_EXTRA_TOP1,      /* fraction of queries whose most-attended key is a target */
    PROBE_EXTRA_HARD_TOP1, /* the same over the queries the class's `hard` rule marks */
    PROBE_EXTRA_OFFSET,    /* positional: the offset whose share is the score */
    PROBE_EXTRA_NORM_RATIO,/* the head's mean output norm over the median head's, in this suite */
    PROBE_EXTRA_WEIGHTS,   /* a statistic of the weights (analyzer/ov_classes.h), filled after the
                              forwards: copy_suppression's OV suppression share */
} probe_extra_kind;

/* Where the control keys of a query come from (analyzer/score.h, docs/scores.md "Control keys"). */
typedef enum {
    PROBE_CONTROL_RANDOM,        /* as many keys as targets, drawn from the whole window */
    PROBE_CONTROL_SAME_DISTANCE, /* the targets moved to the distance another query of the item
                                    has to its own targets: a head that attends by distance alone
                                    scores as much there as on the targets */
} probe_control_kind;

typedef struct probe_class probe_class;

/* What a generator gets: the model's tokenizer and sizes, the suite's seeded stream. */
typedef struct probe_gen_s {
    const andrea_tokenizer *tok;
    int vocab_size;
    int seq_len;
    struct probe_rng_s *rng;
} probe_gen;

struct probe_class {
    const char *name;         /* class = suite name */
    const char *targets;      /* the target rule, in words */
    const char *stream;       /* generator stream name (NULL: name): classes sharing one share items */
    int n_items, seq_len;     /* built-in suite defaults (0: PROBE_DEFAULT_*) */
    /* Fills s->items[0..n_items) (tokens and targets) for this class. */
    int (*generate)(const probe_class *c, const probe_gen *g, probe_suite *s, ae_error *err);
    /* The default target rule on an item whose tokens (and entities) are set. */
    int (*default_targets)(probe_item *it, const andrea_tokenizer *tok, ae_error *err);
    probe_extra_kind extra;
    const char *extra_name;   /* catalog name of the extra statistic, or NULL */
    /* Hard queries: hard[q] = 1 for target queries q the extra statistic counts (NULL: none). */
    void (*hard)(const probe_item *it, unsigned char *hard);
    /* Causal check: use[p] = 1 where the loss of predicting token p + 1 from position p counts. */
    void (*loss_positions)(const probe_item *it, unsigned char *use);
    const char *loss_words;   /* the loss positions, in words */
    probe_label_rule rule;    /* default label rule */
    probe_control_kind control; /* left out of an entry: PROBE_CONTROL_RANDOM */
    probe_score_kind score;     /* left out of an entry: PROBE_SCORE_MASS */
    int opt_in;                 /* 1: not among the default suites (run without --probes); named, or
                                   with --probes all. Left out of an entry: 0 */
};

/* The table, in suite order; terminated by an entry with name NULL. */
extern const probe_class andrea_probe_classes[];

/* The entry of a built-in class, or NULL for any other name. */
const probe_class *andrea_probe_class_find(const char *name);

/* The generic loss positions of a user suite: every target query. */
void andrea_probe_loss_at_queries(const probe_item *it, unsigned char *use);

#endif
