/* model_random.h — random ANDREA models and checkpoint writers, for tests, benchmarks and tools.
 *
 * Job: make a model of any valid shape without a training run, and write it in every format
 * andrea reads, so tests can round-trip loaders and build bad files by editing good ones.
 * Invariants: andrea_model_init_random is a pure function of (cfg, seed) on every host (its RNG
 * is splitmix64 + Box-Muller in double precision); writers produce files andrea_model_load
 * reads back to the same values (exactly for fp32; rounded to nearest even for bf16/fp16);
 * files appear complete or not at all (common/atomic_file.h).
 * Failure contract: -1 with "PATH: problem"; the model given is never modified by a writer.
 */
#ifndef ANDREA_MODEL_RANDOM_H
#define ANDREA_MODEL_RANDOM_H

#include <stdint.h>

#include "../../engine/model.h"

/* Allocates m for cfg and fills it GPT-2 style: weights and embeddings ~ N(0, 0.02) (residual
 * output projections attprojw and fcprojw scaled by 1/sqrt(2L), as GPT-2 does), LayerNorm weights
 * 1 and biases 0, padded vocabulary rows 0. Linear biases ~ N(0, 0.02) rather than GPT-2's zeros,
 * so that tests exercise every bias. m->format = ANDREA_FMT_BIN, stored_dtype "fp32",
 * path "random:SEED". head_dim and padded_vocab_size may be left 0 (= C/H and V). */
int andrea_model_init_random(andrea_model *m, const andrea_config *cfg, uint64_t seed, ae_error *err);

/* Writes m as an ANDREA .bin (llm.c layout): version 3 = fp32, 5 = bf16. */
int andrea_model_save_bin(const andrea_model *m, const char *path, int version, ae_error *err);

/* Writes DIR/model.safetensors + DIR/config.json (creating DIR if needed) in Hugging Face GPT-2
 * layout: Conv1D weights [in, out], wte with the real vocab_size rows only, tensor names with
 * the `transformer.` prefix (with_prefix != 0, as GPT2LMHeadModel saves them) or without (as
 * the original GPT-2 files). dtype: "F32", "F16" or "BF16". */
int andrea_model_save_safetensors(const andrea_model *m, const char *dir, const char *dtype, int with_prefix,
                                  ae_error *err);

#endif
