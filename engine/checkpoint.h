/* checkpoint.h — the checkpoint readers behind andrea_model_load (model.h), and what they share.
 *
 * Job: turn a file into an andrea_model. andrea_model_load (checkpoint.c) picks the reader:
 *   - a folder holding model.safetensors + config.json            -> safetensors reader
 *   - a folder holding no model.safetensors but Hugging Face's shards: model.safetensors.index.json
 *     + the shards it names + config.json                          -> safetensors reader, sharded
 *   - a *.safetensors file with config.json beside it             -> safetensors reader
 *   - a *.safetensors.index.json file, shards and config.json beside it -> sharded
 *   - anything else                                                -> ANDREA .bin reader (llm.c layout)
 * Invariants: a reader validates every size the file claims (config limits in andrea_param_sizes,
 * exact file length, in-file offsets) BEFORE it allocates anything the file's sizes drive; reads
 * use bounded scratch memory (fp16/bf16 are converted in chunks); the result satisfies model.h's
 * invariants, non-finite values included (the loader runs andrea_model_check_finite); wte's
 * padding rows (V..Vp-1) are ignored by that check and set to zero.
 * Failure contract: -1 with a one-line "FILE: problem" (the tensor named where one is at fault)
 * and the model left zeroed; nothing is printed.
 * Byte order: all formats are little-endian; andrea runs on little-endian hosts only (checked at
 * compile time in checkpoint.c).
 */
#ifndef ANDREA_CHECKPOINT_H
#define ANDREA_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define ANDREA_BIN_MAGIC 20240326
#define ANDREA_BIN_HEADER_INTS 256
/* llm.c's training-state files (state_*.bin) carry this magic; refused with a pointed message. */
#define ANDREA_LLMC_STATE_MAGIC 20240527
/* A safetensors JSON header larger than this is refused before it is read. */
#define ANDREA_SAFETENSORS_MAX_HEADER (100u * 1000u * 1000u)
/* config.json larger than this is refused before it is read. */
#define ANDREA_CONFIG_JSON_MAX (4u * 1024u * 1024u)

/* Readers (checkpoint_bin.c, checkpoint_safetensors.c). Each fills cfg, parameters, format and
 * stored_dtype; andrea_model_load fills path/dir and runs the finite check. */
int andrea_load_bin(andrea_model *m, const char *path, ae_error *err);
int andrea_load_safetensors(andrea_model *m, const char *st_path, const char *config_path, ae_error *err);

/* ---- sharded safetensors (checkpoint_index.c): Hugging Face's save_pretrained above 5 GB ----
 * The index is {"metadata": {"total_size": BYTES, ...}, "weight_map": {"tensor": "shard file"}}.
 * andrea_shard_index_read reads it strictly (strict_input.h, at most ANDREA_CONFIG_JSON_MAX bytes)
 * and refuses a weight_map that is missing or empty, a value that is not a string, a shard name
 * that is not a plain file name of the index's folder ending in .safetensors (no '/', '\\',
 * control byte, "." or ".."), more than ANDREA_MAX_SHARDS shards, and a total_size not written in
 * digits; the shards themselves are checked by the loader (each as one safetensors file, then
 * against the index: every tensor in the shard the index names, nothing else in any shard, the
 * sum of their bytes = total_size when it is given, no shard the same file as another). */
#define ANDREA_SHARD_INDEX_NAME "model.safetensors.index.json"
#define ANDREA_MAX_SHARDS 1000
typedef struct {
    char **shards;       /* [n_shards] distinct shard file names, ascending byte order */
    int n_shards;
    char **names;        /* [n_tensors] weight_map's tensor names, ascending byte order */
    int *shard_of;       /* [n_tensors] index into shards */
    size_t n_tensors;
    int has_total_size;  /* metadata.total_size was given */
    size_t total_size;
} andrea_shard_index;
int andrea_shard_index_read(const char *index_path, andrea_shard_index *ix, ae_error *err);
/* The position of tensor `name` in ix->names, or -1. */
long andrea_shard_index_find(const andrea_shard_index *ix, const char *name);
void andrea_shard_index_free(andrea_shard_index *ix);
/* Paths of the checkpoint's files, malloc'd: [0] the index, [1 + k] shard k (the index's folder +
 * its name); *n = 1 + n_shards. andrea_shard_paths_free frees them. */
int andrea_shard_paths(const char *index_path, const andrea_shard_index *ix, char ***paths, int *n, ae_error *err);
void andrea_shard_paths_free(char **paths, int n);
/* The sharded reader: every shard as andrea_load_safetensors checks one file, then against ix. */
int andrea_load_safetensors_sharded(andrea_model *m, const char *index_path, const andrea_shard_index *ix,
                                    const char *config_path, ae_error *err);

/* Validates a .bin's header and length (everything andrea_load_bin checks but the values) and
 * returns its config and version (3 or 5; version may be NULL), without reading the weights. */
int andrea_bin_read_config(const char *path, andrea_config *cfg, int *version, ae_error *err);

/* Parses a Hugging Face GPT-2 config.json into cfg (Vp = V). Refuses missing or non-integer
 * sizes and settings andrea does not implement (layer_norm_epsilon != 1e-5, an activation other
 * than the tanh GELU, n_inner != 4*n_embd, scale_attn_by_inverse_layer_idx, ...). */
int andrea_config_json_read(const char *path, andrea_config *cfg, ae_error *err);

/* The file whose bytes identify the checkpoint (the .bin, the model.safetensors inside a folder,
 * or a sharded checkpoint's index), written into out (capacity cap). */
int andrea_checkpoint_weights_file(const andrea_model *m, char *out, size_t cap, ae_error *err);
/* The same for a checkpoint path before it is loaded. */
int andrea_checkpoint_weights_path(const char *path, char *out, size_t cap, ae_error *err);
/* The checkpoint's identity, lowercase hex: the sha256 of its weights file, or for a sharded
 * checkpoint the sha256 of the lines "SHA256  NAME\n" of the index and then of each shard in
 * ascending byte order of their names, `sha256sum`'s own output (checkpoint_hash.h,
 * docs/checkpoints.md "Identity"). For a model from andrea_model_load the hash started on a
 * thread when the load started (checkpoint_hash.h), waited for here; otherwise read now. */
int andrea_checkpoint_sha256(const andrea_model *m, char hex[65], ae_error *err);
/* The same identity for a checkpoint path (a file or a folder), read now: what classify compares
 * with a dump's record to find a moved checkpoint. */
int andrea_checkpoint_sha256_path(const char *path, char hex[65], ae_error *err);

#endif
