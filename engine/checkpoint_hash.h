/* checkpoint_hash.h — the checkpoint's sha256, started on a thread of its own when the load
 * starts, so that hashing the file overlaps reading it, converting it and (on a GPU) uploading
 * it; andrea_checkpoint_sha256 (checkpoint.h) takes the result, waiting only for what is left.
 *
 * Job: hash the weights file (the bytes andrea_checkpoint_weights_file names) once, beside the
 * reader: the reader and the hasher read the same file at the same time, so the disk is read
 * once (the page cache serves the second reader). A sharded checkpoint is hashed file by file,
 * index first, then the shards in the order the loader reads them.
 * Invariants: at most one join; the result is cached (a second caller gets it at once); the
 * digest is the plain sha256 of the file, the same as andrea_sha256_file's, or for a sharded
 * checkpoint andrea_sha256_sharded's, the same as a later andrea_checkpoint_sha256_path's; a job nobody asked for is
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
/* Starts andrea_sha256_sharded(files, n) on a thread; NULL when out of memory. */
andrea_sha_job *andrea_sha_job_start_sharded(const char *const *files, int n);

/* A sharded checkpoint's identity: files[0] its index, files[1..n-1] its shards in ascending byte
 * order of their names; each file's sha256 makes one line "HEX  NAME\n" (NAME: the part after the
 * last '/'), and the identity is the sha256 of those lines, in that order: what
 *   cd DIR && sha256sum model.safetensors.index.json SHARD... | sha256sum
 * prints (docs/checkpoints.md). stop (may be NULL) as for andrea_sha256_file_until. */
int andrea_sha256_sharded(const char *const *files, int n, const int *stop, char hex[65], ae_error *err);
/* The hex digest (65 bytes with NUL), waiting for the thread if it still runs. Thread-safe. */
int andrea_sha_job_result(andrea_sha_job *j, char hex[65], ae_error *err);
/* Stops the hashing if it still runs, joins and frees. NULL is fine. */
void andrea_sha_job_free(andrea_sha_job *j);

#endif
