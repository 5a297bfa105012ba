/* probe.h — probe suites: token sequences plus, per query position, the keys a head of the class
 * under test should attend to (docs/probes.md).
 *
 * Job: build the built-in suites (seeded, deterministic) and parse user JSON Lines probe files.
 * Invariants of a probe_suite: name is one of the class names or a user suite name (it selects the
 * class); every item has 1 <= n_tokens <= T_max, every id < vocab_size; targets are (query, key)
 * pairs sorted by query then key with 0 <= key <= query < n_tokens, no duplicates. A query with no
 * pair is not eligible for scoring.
 * Failure contract: a malformed probe-file line fails the whole load with
 * "FILE:LINE: problem"; nothing is returned half-built.
 */
#ifndef ANDREA_PROBE_H
#define ANDREA_PROBE_H

#include <stdint.h>

#include "../common/error.h"
#include "../tokenizer/tokenizer.h"

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

/* The built-in suite names are the class names of classes.h (andrea_probe_classes). */

/* 1 when name is a suite name: 1-63 letters, digits, '_' or '-' (what a probe file may give and a
 * dump may hold: a name becomes an HDF5 group, a class, a file slug and a page anchor). */
int andrea_probe_suite_name_valid(const char *name);

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
#define PROBE_MAX_ITEMS 1000000
/* Most suites one probe file may define. Each becomes an HDF5 group and a class; without a
 * bound, a few MB of one-item lines with distinct names made the loader's name lookup
 * quadratic and the dump write hundreds of thousands of groups (minutes, no end in sight). */
#define PROBE_MAX_SUITES 1024
/* Longest probe-file line accepted (bytes, without the newline). */
#define PROBE_FILE_MAX_LINE (1 << 20)
/* A probe file holds at most this many lines (items and blank lines), and its reading stops at
 * the PROBE_FILE_MAX_BAD_LINES-th malformed line: an endless stream ends either way. */
#define PROBE_FILE_MAX_LINES (16 << 20)
#define PROBE_FILE_MAX_BAD_LINES 1000
/* A probe stream (a FIFO: --probes <(cmd)) that several checkpoints of a series read is kept in
 * memory, at most this many bytes. */
#define PROBE_STREAM_MAX_BYTES (1 << 30)

/* 1 when name is a built-in class (classes.h). */
int andrea_probe_is_builtin(const char *name);

/* Folder holding prose.txt, people.txt, places.txt into out (n bytes): $ANDREA_PROBE_DATA, else
 * share/andrea/probes/data beside the installed binary, else the build tree's source folder
 * (common/data_path.h). 0, or -1 with err naming where it looked. */
int andrea_probe_data_dir(char *out, size_t n, ae_error *err);

/* Builds every suite named in a comma list ("all" or NULL = every built-in suite); *suites is
 * malloc'd. On failure nothing is returned. */
int andrea_probe_suites_builtin_list(const char *names, const andrea_tokenizer *tok, int vocab_size,
                              int max_seq_len, const probe_options *opt, probe_suite **suites,
                              int *n_suites, ae_error *err);

/* The --probes argument of `andrea dump` / `andrea analyze`: a path to a JSON Lines probe file
 * (an existing file, or a name ending in .jsonl) or a comma list of built-in suite names
 * (NULL, "" or "all" = every built-in suite). tok may be NULL for token-id probe files. */
int andrea_probe_suites_load(const char *spec, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                      const probe_options *opt, probe_suite **suites, int *n_suites, ae_error *err);
/* 1 when andrea_probe_suites_load would read spec as a probe file (so the caller knows whether a
 * missing tokenizer is fatal). */
int andrea_probe_spec_is_file(const char *spec);

/* Frees an array of n suites (each with andrea_probe_suite_free) and the array itself. */
void andrea_probe_suites_free(probe_suite *suites, int n);

/* Sorts targets by (query, key) and drops duplicates; returns the new count. */
int andrea_probe_targets_normalize(probe_target *t, int n);

/* Builds a built-in suite for a model with this tokenizer and vocab/max length. */
int andrea_probe_suite_builtin(const char *name, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                        const probe_options *opt, probe_suite *out, ae_error *err);

/* Loads a JSON Lines probe file; items are grouped into one suite per "suite" value, in order of
 * first appearance. Texts are tokenized with tok (NULL: only "tokens" items are accepted). */
int andrea_probe_file_load(const char *path, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                    probe_suite **suites, int *n_suites, ae_error *err);

/* The same from the bytes of a probe file kept in memory (andrea_probe_file_keep); path names it
 * in messages. */
int andrea_probe_file_load_bytes(const char *path, const char *bytes, size_t len, const andrea_tokenizer *tok,
                                 int vocab_size, int max_seq_len, probe_suite **suites, int *n_suites, ae_error *err);
/* For a probe file that can be read only once (a FIFO: --probes <(cmd)), its bytes (malloc'd, at
 * most PROBE_STREAM_MAX_BYTES) in *bytes and *len, to be loaded once per checkpoint with
 * andrea_probe_file_load_bytes; a regular file leaves *bytes NULL (read it again each time). -1 on
 * failure (err). */
int andrea_probe_file_keep(const char *path, char **bytes, size_t *len, ae_error *err);

/* Fills the built-in target rule of suite `name` for an item whose tokens are set (used when a
 * probe-file item has no explicit "targets"). Unknown class names leave the item without targets. */
int andrea_probe_default_targets(const char *name, probe_item *item, const andrea_tokenizer *tok, ae_error *err);

void andrea_probe_suite_free(probe_suite *s);

#endif
