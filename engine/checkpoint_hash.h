/* checkpoint_hash.h — the checkpoint's sha256, started on a thread of its own when the load
 * starts, so that hashing the file overlaps reading it, converting it and (on a GPU) uploading
 * it; andrea_checkpoint_sha256 (checkpoint.h) takes the result, waiting only for what is left.
 *
 * Job: hash the weights file (the bytes andrea_checkpoint_weights_file names) once, beside the
 * reader: the reader and the hasher read the same file at the same time, so the disk is read
 * once (the page cache serves the second reader).
 * Invariants: at most one join; the result is cached (a second caller gets it at once); the
 * digest is the plain sha256 of the file, the same as andrea_sha256_file's; a job nobody asked for is
 * stopped within one 1 MiB read when the model is freed (commands that never need the hash pay
 * only what ran meanwhile). No thread to be had: the job hashes when first asked, as before.
 * Failure contract: andrea_sha_job_result returns -1 with the hashing error ("FILE: problem").
 */
#ifndef ANDREA_CHECKPOINT_HASH_H
#define ANDREA_CHECKPOINT_HASH_H

#include "../common/error.h"

typedef struct andrea_sha_job andrea_sha_job;

/* Starts hashing `file` on a thread; NULL when out of memory (the caller then hashes itself). */
andrea_sha_job *andrea_sha_job_start(const char *file);
/* The hex digest (65 bytes with NUL), waiting for the thread if it still runs. Thread-safe. */
int andrea_sha_job_result(andrea_sha_job *j, char hex[65], ae_error *err);
/* Stops the hashing if it still runs, joins and frees. NULL is fine. */
void andrea_sha_job_free(andrea_sha_job *j);

#endif
