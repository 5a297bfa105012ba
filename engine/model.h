/* model.h — an ANDREA model in memory: config plus fp32 parameters in the fused view.
 *
 * Job: one representation for every checkpoint format (ANDREA .bin v3/v5, Hugging Face GPT-2
 * safetensors). Loaders convert to this; engines (CPU, CUDA) and analysis read only this.
 * Invariants after a successful load:
 *   - d_model = n_head * head_dim, every size > 0, vocab_size <= padded_vocab_size;
 *   - all parameters live in ONE float buffer (`memory`), in llm.c order, every tensor in
 *     Linear layout [out, in] (safetensors' Conv1D [in, out] is transposed on load);
 *   - heads are a stride pattern, never separate buffers: in qkvw [L, 3C, C] rows 0..C-1 are Q,
 *     C..2C-1 K, 2C..3C-1 V, and head h owns rows h*hd..(h+1)*hd-1 of each block; in attprojw
 *     [L, C, C] (out = C, in = C) head h owns input columns h*hd..(h+1)*hd-1 (= rows of W_O in
 *     the [in, out] view of docs/checkpoints.md);
 *   - every value is finite (NaN/Inf are refused at load, naming the tensor);
 *   - rows vocab_size..padded_vocab_size-1 of wte are padding and never used.
 * Failure contract: loaders return -1 with "PATH: problem" and leave the model zeroed.
 */
#ifndef ANDREA_MODEL_H
#define ANDREA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

typedef struct {
    int max_seq_len;       /* maxT: rows of wpe */
    int vocab_size;        /* V: real tokens */
    int padded_vocab_size; /* Vp: rows of wte (>= V) */
    int n_layer;           /* L */
    int n_head;            /* H */
    int d_model;           /* C */
    int head_dim;          /* hd = C / H */
} andrea_config;

typedef struct {
    float *wte;      /* [Vp, C] token embedding, also the tied unembedding */
    float *wpe;      /* [maxT, C] */
    float *ln1w;     /* [L, C] */
    float *ln1b;     /* [L, C] */
    float *qkvw;     /* [L, 3C, C] fused Q|K|V, Linear layout */
    float *qkvb;     /* [L, 3C] */
    float *attprojw; /* [L, C, C] W_O, Linear layout */
    float *attprojb; /* [L, C] */
    float *ln2w;     /* [L, C] */
    float *ln2b;     /* [L, C] */
    float *fcw;      /* [L, 4C, C] */
    float *fcb;      /* [L, 4C] */
    float *fcprojw;  /* [L, C, 4C] */
    float *fcprojb;  /* [L, C] */
    float *lnfw;     /* [C] */
    float *lnfb;     /* [C] */
} andrea_params;

#define ANDREA_N_PARAM_TENSORS 16

typedef enum { ANDREA_FMT_BIN = 1, ANDREA_FMT_SAFETENSORS = 2 } andrea_format;

typedef struct {
    andrea_config cfg;
    andrea_params p;
    float *memory;          /* owns every parameter */
    size_t n_floats;        /* floats in memory */
    andrea_format format;
    char stored_dtype[8];   /* "fp32", "bf16", "fp16" as found in the file */
    char path[4096];        /* the path given to the loader */
    char dir[4096];         /* folder holding the checkpoint (tokenizer files are looked up here) */
    struct andrea_sha_job *sha_job; /* the file's sha256 being computed since the load started
                                       (engine/checkpoint_hash.h), or NULL; freed with the model */
} andrea_model;

/* Sizes (in floats) of the 16 tensors in llm.c order, for a config. Fails on overflow or
 * an invalid config (zero sizes, C % H != 0, absurd values). `what` (may be NULL) gets a
 * short description of the problem. */
int andrea_param_sizes(const andrea_config *c, size_t sizes[ANDREA_N_PARAM_TENSORS], size_t *total,
                       ae_error *err);
/* Names of the 16 tensors in llm.c order ("wte", "wpe", "ln1w", ...). */
extern const char *const andrea_param_names[ANDREA_N_PARAM_TENSORS];

/* Allocates memory for cfg and points p at its tensors. */
int andrea_model_alloc(andrea_model *m, const andrea_config *cfg, ae_error *err);

/* Loads an ANDREA .bin, a .safetensors file (config.json beside it) or a folder holding
 * model.safetensors + config.json. */
int andrea_model_load(andrea_model *m, const char *path, ae_error *err);
void andrea_model_free(andrea_model *m);

/* Refuses non-finite parameters, naming the first bad tensor. */
int andrea_model_check_finite(const andrea_model *m, ae_error *err);

/* out[C] = the mean over the real vocabulary (vocab_size rows, not the padding) of wte's rows, summed
 * in double: the engines centre direct logit attribution across the vocabulary with it. */
int andrea_wte_mean(const andrea_model *m, float *out, ae_error *err);

/* Name of the family whose shape matches the family table of docs/checkpoints.md ("ANDREA-120M"), or NULL. */
const char *andrea_family_name(const andrea_config *c);

/* Reads only a checkpoint's config (the .bin header, or config.json for safetensors) and the
 * folder its tokenizer files would sit in, without loading weights: for commands that need the
 * vocabulary size alone (`andrea tokenize`). The config is validated as the loaders do and a .bin
 * must have the length its header implies; weights are not checked. engine/checkpoint_peek.c. */
int andrea_checkpoint_peek_config(const char *path, andrea_config *cfg, char *dir, size_t dircap,
                                  ae_error *err);

#endif
