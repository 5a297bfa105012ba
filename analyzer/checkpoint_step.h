/* checkpoint_step.h — the training step of a checkpoint, as the catalog stores it.
 *
 * Job: one answer for "at which step was this checkpoint saved", where --step N is not given:
 * a Hugging Face Trainer folder's trainer_state.json ({"global_step": N, ...}) when the checkpoint
 * is a folder holding one, else its name (andrea_step_from_name: "checkpoint-500",
 * "step_100", "model_step12000.bin", "iter300"). docs/checkpoints.md ("Training runs").
 * Invariants: trainer_state.json is read as every outside JSON file is (common/strict_input.h: a
 * regular file, never waited on; at most ANDREA_TRAINER_STATE_MAX bytes; strict JSON, no key given
 * twice); its global_step, when present and not null, is a non-negative integer written as digits,
 * below 2^53 (a double holds it exactly), and it wins over the name, which a note then names.
 * A file without global_step (or with null) gives no step: the name's counts.
 * Failure contract: -1 with "DIR/trainer_state.json: what is wrong" (one line); nothing else fails.
 */
#ifndef ANDREA_CHECKPOINT_STEP_H
#define ANDREA_CHECKPOINT_STEP_H

#include <stddef.h>

#include "../common/error.h"

/* trainer_state.json holds the Trainer's whole log history (one entry per logging step): a long
 * run's is a few MB; 64 MiB bounds what a file can make andrea read. */
#define ANDREA_TRAINER_STATE_MAX (64u * 1024u * 1024u)

/* The step of checkpoint path (a file or a folder): 1 with *step set, 0 when neither its
 * trainer_state.json nor its name gives one, -1 on a trainer_state.json refused (err). note (may
 * be NULL; cap bytes) gets one line when trainer_state.json's global_step and the name's step
 * differ ("PATH: trainer_state.json's global_step 498 differs from the step 500 of its name;
 * step 498 is used"), else "". */
int andrea_checkpoint_step(const char *path, long long *step, char *note, size_t cap, ae_error *err);

/* Step of a checkpoint parsed from its file or folder name: "..._step12000.bin", "step-1200",
 * "step_5", "Step300", and where a word begins "iter_300", "iter300", "checkpoint-500" (Hugging
 * Face Trainer's folders); the last match in the base name, the digits ending the number
 * ("step3e3", "step100k" and "step1.5" have none). Returns 1 and sets *step when found, else 0.
 * (andrea_checkpoint_step above adds a Trainer folder's trainer_state.json.) */
int andrea_step_from_name(const char *path, long long *step);

/* 1 when a checkpoint's stem (its name without .bin/.safetensors) is only a step: "checkpoint-500",
 * "step_100", "step100", "step-100", "iter_100", "iter100" (letters in any case). Such a checkpoint
 * is named with the folder that holds it, its run ("run/checkpoint-500": andrea_catalog_model_name,
 * catalog/catalog.h). */
int andrea_is_step_name(const char *stem);

/* The base name of path into out (a folder's trailing '/' dropped: "run/checkpoint-500/" gives
 * "checkpoint-500"). */
void andrea_checkpoint_base_name(const char *path, char *out, size_t cap);

#endif
