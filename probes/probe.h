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
#include "probe_types.h"

/* The built-in suite names are the class names of classes.h (andrea_probe_classes). */

/* 1 when name is a suite name: 1-63 letters, digits, '_' or '-' (what a probe file may give and a
 * dump may hold: a name becomes an HDF5 group, a class, a file slug and a page anchor). */
int andrea_probe_suite_name_valid(const char *name);


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

/* Builds every suite named in a comma list ("all": every built-in suite; NULL or "": the default
 * suites, every built-in one but the opt-in classes, classes.h); *suites is malloc'd. On failure
 * nothing is returned. */
int andrea_probe_suites_builtin_list(const char *names, const andrea_tokenizer *tok, int vocab_size,
                              int max_seq_len, const probe_options *opt, probe_suite **suites,
                              int *n_suites, ae_error *err);

/* One --probes argument of `andrea dump` / `andrea analyze` (andrea_probe_sources_add): a comma
 * list of built-in suite names, "all" and JSON Lines probe files (NULL or "" = every built-in
 * suite). tok may be NULL for token-id probe files. */
int andrea_probe_suites_load(const char *spec, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                      const probe_options *opt, probe_suite **suites, int *n_suites, ae_error *err);
/* 1 when spec, one piece of a --probes list, names a probe file: a path with a '/', a name ending
 * in .jsonl or .json, or an existing file whose name is no built-in suite. */
int andrea_probe_spec_is_file(const char *spec);

/* ---- the probe sources of one command (probe_sources.c): --probes, repeatable, each a comma
 * list of built-in suite names, "all" and probe files in any mix; --texts, a plain text file ----
 * Job: tell the pieces apart once (at option parsing), read every stream that can be read only
 * once (a FIFO probe file, --texts, stdin) into memory once, and build the suites for each
 * model (a series builds them per checkpoint) in the order given.
 * Invariants: no source twice, no suite name from two sources (refused at load, naming both); no
 * source at all = every built-in suite.
 * Failure contract: -1 with one line naming the argument, file or FILE:LINE at fault. */
#define PROBE_MAX_SOURCES 64
/* The suite a --texts file makes (one item a non-blank line, map-only). */
#define PROBE_TEXTS_SUITE "texts"
enum { PROBE_SRC_BUILTIN = 1, PROBE_SRC_FILE, PROBE_SRC_TEXTS };
typedef struct {
    int kind;    /* PROBE_SRC_* */
    char *name;  /* the built-in suite's name, or the file's path ("-": stdin), malloc'd */
    char *bytes; /* contents read once (a stream, every --texts), malloc'd, or NULL: read name */
    size_t len;
} probe_source;
typedef struct {
    probe_source src[PROBE_MAX_SOURCES];
    int n;
} probe_sources;

void andrea_probe_sources_init(probe_sources *ps);
/* One --probes argument: an existing file's path as a whole (a path with a comma too), else a
 * comma list whose pieces are "all", built-in suite names, or probe files (andrea_probe_spec_is_file
 * of the piece). An empty piece ("bos,"), an unknown name or a source given twice is refused. */
int andrea_probe_sources_add(probe_sources *ps, const char *arg, ae_error *err);
/* --texts FILE ("-": standard input): one text a line, one map-only suite PROBE_TEXTS_SUITE. */
int andrea_probe_sources_add_texts(probe_sources *ps, const char *path, ae_error *err);
/* Reads every --texts source (a file, a FIFO or stdin) into memory, and with `several` (the
 * suites are loaded for several models) every probe file that is a stream (FIFO), once (at most
 * PROBE_STREAM_MAX_BYTES each), so each load reads the same bytes. Without `several` a probe
 * stream is read by its one load, line by line, with the file's limits. */
int andrea_probe_sources_keep(probe_sources *ps, int several, ae_error *err);
/* 1 when the sources are probe files only (token-id files may do without a tokenizer). */
int andrea_probe_sources_files_only(const probe_sources *ps);
/* 1 when built-in suites are among the sources (--n, --len, --seed apply to them). */
int andrea_probe_sources_has_builtin(const probe_sources *ps);
/* PROBE_SRC_FILE or PROBE_SRC_TEXTS when path is one of the files the sources read (an output
 * must not replace it), else 0. */
int andrea_probe_sources_reads(const probe_sources *ps, const char *path);
/* Builds the suites for a model (as andrea_probe_suites_load for each source, in order). */
int andrea_probe_sources_load(const probe_sources *ps, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                              const probe_options *opt, probe_suite **suites, int *n_suites, ae_error *err);
void andrea_probe_sources_free(probe_sources *ps);

/* The map-only suite PROBE_TEXTS_SUITE of a plain text (len bytes; path names it in messages):
 * each non-blank line one item, BOS first when the vocabulary has one. A line that is not UTF-8,
 * holds a NUL or is longer than max_seq_len tokens is refused with its number; so is a text
 * without any non-blank line. */
int andrea_probe_texts_load_bytes(const char *path, const char *bytes, size_t len, const andrea_tokenizer *tok,
                                  int max_seq_len, probe_suite *out, ae_error *err);

/* Frees an array of n suites (each with andrea_probe_suite_free) and the array itself. */
void andrea_probe_suites_free(probe_suite *suites, int n);

/* 1 when the two items are the same sequence, token for token (their targets may differ): one
 * forward serves both (run/run.c's twin suites, the causal check's groups). */
int andrea_probe_item_same_tokens(const probe_item *a, const probe_item *b);

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
