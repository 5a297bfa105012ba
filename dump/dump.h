/* dump.h — the HDF5 dump: checked reader (analyzer and reports side); the writer is
 * dump/dump_write.h.
 *
 * Layout (docs/dump-format.md):
 *   / attributes: andrea_version, checkpoint_path, checkpoint_sha256 ("" for an in-memory model),
 *                 config (JSON string) and n_layer, n_head, d_model, head_dim, vocab_size,
 *                 padded_vocab_size, max_seq_len (int), maps_dtype ("fp16"|"fp32"),
 *                 contrib ("none"|"norm"|"full"), suites (comma list, file order), engine
 *                 ("cpu"|"cuda"), tokenizer (description, may be "")
 *   /<suite>/ attributes: seed (uint64), source ("builtin" or the probe file), n_seq, T
 *     tokens        int32   [n_seq, T]   (0 beyond lengths)
 *     lengths       int32   [n_seq]
 *     targets       int32   [n_pairs, 3] rows (seq, query, key), sorted by seq, query, key
 *     entities      int32   [n_spans, 3] rows (seq, start, end), token spans, end exclusive
 *                                        (present in every group; empty when no item has spans)
 *     attention     fp16|fp32 [n_seq, L, H, T, T]  chunk [1, 1, 1, T, T]; rows >= length are 0
 *     head_out_norm float32 [n_seq, L, H, T]        chunk [1, L, H, T]   (absent: contrib none)
 *     head_dla      float32 [n_seq, L, H, T]        NaN where t + 1 >= length (absent: contrib none)
 *     head_out      float32 [n_seq, L, H, T, C]     chunk [1, 1, 1, T, C]; only with contrib full,
 *                                                   or --heads (then heads not chosen read as 0
 *                                                   and the dataset attribute "heads" lists the
 *                                                   chosen ones as "L.H,L.H")
 *     token_text    fixed-length UTF-8 [n_seq, T]  each token's text ("" past lengths; absent
 *                                        when the dump was written without a tokenizer)
 *     seq, layer, head, query, key, position, target, entity, field (+ d_model with head_out):
 *                   int32 0..n-1 dimension scales (H5DS) attached to every dataset's axes
 *   / attribute tokenizer_vocab_sha256: the tokenizer's identity ("" without one)
 * Strings are fixed-length, NUL-terminated UTF-8 (h5py: numpy.bytes_, .decode() them).
 * fp16 is IEEE binary16 (an HDF5 float type derived from IEEE F32LE; h5py reads float16).
 * Seal: the file starts with a 512-byte HDF5 user block (ignored by HDF5 tools) holding
 * "ANDREA-DUMP 1\nsha256 <hex of bytes 512..EOF>\n"; the reader checks it before HDF5 parses
 * anything, because HDF5 1.10 itself crashes on some damaged files.
 * T is the suite's longest item. Invariant: written under "<out>.tmp-<pid>", renamed when complete.
 * MPI dumps (docs/dump-format.md): a master file of this layout whose attention, head_out_norm,
 * head_dla and head_out are virtual datasets over part files "<out>.part-R-of-N" beside it (root
 * attributes parts, part_seals); the reader checks every part's presence and seal against the
 * master's record and accepts only mappings to listed parts, so it reads a master as a file.
 * Failure contract: the reader refuses a file that is not an andrea dump or whose datasets
 * disagree with the root config, with "FILE: problem"; it never lets HDF5 print.
 */
#ifndef ANDREA_DUMP_H
#define ANDREA_DUMP_H

#include <stdint.h>

#include "../common/error.h"
#include "../probes/probe.h"
#include "../engine/model.h"

/* ---------- seal ---------- */
#define ANDREA_DUMP_USERBLOCK 512
#define ANDREA_DUMP_MAGIC "ANDREA-DUMP 1\n"

/* The seal's checksum: andrea_sha256_blocks (common/sha256.h) of bytes ANDREA_DUMP_USERBLOCK..EOF in
 * blocks of this size, written as "sha256-blocks 67108864 <hex>". Readers also accept the first
 * form, "sha256 <hex>" (plain sha256 of the same bytes: one thread, ~10 s for a 20 GB dump). */
#define ANDREA_DUMP_SEAL_BLOCK ((size_t)64 << 20)

/* Writes the seal (header + checksum of bytes ANDREA_DUMP_USERBLOCK..EOF) into the user block of a
 * closed dump. The writer calls it; tests call it to make deliberately inconsistent files that
 * still pass the checksum (what a hostile file would do). */
int andrea_dump_seal(const char *path, char hex_out[65], ae_error *err); /* hex_out: the seal written, or NULL */

/* ---------- reader ---------- */
typedef struct andrea_dump andrea_dump;

typedef struct {
    char name[64];
    int n_seq, T;
    uint64_t seed;
} andrea_dump_suite_info;

andrea_dump *andrea_dump_open(const char *path, ae_error *err);
void andrea_dump_close(andrea_dump *d);

const andrea_config *andrea_dump_config(const andrea_dump *d);
const char *andrea_dump_checkpoint_path(const andrea_dump *d);
const char *andrea_dump_checkpoint_sha256(const andrea_dump *d);
const char *andrea_dump_maps_dtype(const andrea_dump *d);
/* The seal's checksum (64 hex digits): identifies this dump's content (the catalog's runs.dump_seal). */
const char *andrea_dump_seal_hex(const andrea_dump *d);
int andrea_dump_n_suites(const andrea_dump *d);
const andrea_dump_suite_info *andrea_dump_suite(const andrea_dump *d, int i);

/* "none", "norm" or "full"; the tokenizer description ("" when unknown). */
const char *andrea_dump_contrib(const andrea_dump *d);
const char *andrea_dump_tokenizer(const andrea_dump *d);
/* The dump's tokenizer_vocab_sha256 ("" for a dump without a tokenizer, or older than it). */
const char *andrea_dump_tokenizer_vocab_sha256(const andrea_dump *d);
/* A tokenizer's identity as dumps record it: sha256 hex of every id's text (docs/dump-format.md),
 * so a reader can tell whether a tokenizer found later is the one the dump was made with. 0 or -1. */
struct andrea_tokenizer;
int andrea_dump_tokenizer_sha256(const struct andrea_tokenizer *tok, int vocab_size, char hex[65]);
/* 1 when suite holds the dataset (e.g. "head_dla", "head_out"), else 0. */
int andrea_dump_has(const andrea_dump *d, int suite, const char *dataset);

/* Reads one suite's items back (tokens, lengths, targets, entities) into a probe_suite. */
int andrea_dump_read_items(andrea_dump *d, int suite, probe_suite *out, ae_error *err);
/* Reads one attention map [T, T] (fp32, converted from fp16 if needed) of (seq, layer, head). */
int andrea_dump_read_map(andrea_dump *d, int suite, int seq, int layer, int head, float *out,
                         ae_error *err);
/* Reads [L, H, T] per-head per-position values for one sequence: which = "head_out_norm" or
 * "head_dla". */
int andrea_dump_read_head_values(andrea_dump *d, int suite, int seq, const char *which, float *out,
                                 ae_error *err);

/* Reads one head's W_O contribution [T, C] of one sequence (dumps with head_out only). */
int andrea_dump_read_head_out(andrea_dump *d, int suite, int seq, int layer, int head, float *out,
                              ae_error *err);

/* The text of token id as the writer's tokenizer gave it (the suites' token_text datasets,
 * docs/dump-format.md), so a dump reads without its tokenizer: the number of bytes written to buf
 * (NUL-terminated, cut to cap - 1), -1 when no suite holds that id with text (a dump written
 * without a tokenizer, or older than token_text), -2 with err filled when a token_text is
 * malformed. The first call reads every suite's tokens and token_text once (one row at a time). */
int andrea_dump_token_text(andrea_dump *d, int id, char *buf, size_t cap, ae_error *err);

/* Reads the whole dump (every suite's items, every attention map, per-head values, head_out)
 * in a forked child process before the caller touches it with HDF5, because HDF5 1.10.8 can
 * read out of bounds or crash on crafted files that carry a valid seal (docs/reliability.md).
 * Returns 0 when the child read everything; -1 with the child's "FILE: problem", or with
 * "PATH: damaged dump: the HDF5 library crashed reading it (signal N)" when the child died, or a
 * timeout message when it ran past 300 s (it is killed). Cost: one extra full read of the file
 * (docs/dump-format.md). Call it before andrea_dump_open on a file the user gave; not needed on a
 * dump this process has just written. Uses fork(): call it before starting threads. */
int andrea_dump_check_isolated(const char *path, ae_error *err);

#endif
