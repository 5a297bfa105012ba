/* series_keep.h — what `andrea analyze CKPT CKPT..` keeps from one checkpoint of a series to the
 * next (internal to pipeline/: analyze.c's scorer uses it).
 * Job: one engine for the whole series, CPU or GPU (its buffers allocated once; each next
 * checkpoint of the same shape swapped in with andrea_engine_swap_model), and the next checkpoint
 * read (and its sha256 started, engine/checkpoint_hash.h) on a thread while the current one runs.
 * Invariants: checkpoints are asked for in order; results do not depend on what was kept (the
 * swapped engine runs the forwards an engine opened for the checkpoint would, bit for bit).
 * Failure contract: a checkpoint that cannot be loaded fails when its turn comes, with the message
 * its load gives; nothing is printed here.
 */
#ifndef ANDREA_PIPELINE_SERIES_KEEP_H
#define ANDREA_PIPELINE_SERIES_KEEP_H

#include "../common/error.h"
#include "../engine/forward.h"
#include "../engine/model.h"

typedef struct series_keep series_keep;

/* For the n checkpoints ckpts (which outlive it); NULL when out of memory (then nothing is kept). */
series_keep *andrea_series_keep_new(const char *const *ckpts, int n);
/* Checkpoint i into *m (zeroed first; andrea_model_free it): the one read ahead when it is i, else
 * read now; then starts reading i + 1 on a thread. */
int andrea_series_keep_model(series_keep *k, int i, andrea_model *m, ae_error *err);
/* The engine kept from the last checkpoint, now the caller's; NULL when none (or k is NULL). */
andrea_engine *andrea_series_keep_take_engine(series_keep *k);
/* Keeps e for the next checkpoint (the one kept before is closed); k NULL: closes e. */
void andrea_series_keep_engine(series_keep *k, andrea_engine *e);
/* Waits for the thread, frees what it read, closes the engine. NULL is fine. */
void andrea_series_keep_free(series_keep *k);

#endif
