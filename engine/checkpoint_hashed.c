/* checkpoint_hashed.c — load a checkpoint and hash its weights file at the same time.
 *
 * Job: `andrea analyze` needs both the model and its sha256 (the catalog's identity of the
 * checkpoint); done one after the other they cost load + hash (ANDREA-120M on the H200 machine:
 * 0.70 s + 0.45 s, bench/RESULTS.md). The hash (common/sha256.c, OpenSSL EVP, pread) runs on a
 * thread while andrea_model_load reads and converts the same file, so the pair costs about the
 * longer of the two. No thread to be had: the hash runs after the load, same result.
 * Invariants: the model is the one andrea_model_load gives; hex is the digest of the file that
 * andrea_checkpoint_weights_file names for it (ae_sha256_file), whichever order they ran in.
 * Failure contract: -1 with one "FILE: problem" line, the load's error before the hash's; the
 * model is left zeroed on any failure; the thread is always joined before returning.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../common/progress.h"
#include "../common/sha256.h"
#include "checkpoint.h"

typedef struct {
    char file[4096 + 32];
    char hex[65];
    ae_error err;
    int rc;
    double seconds;
} hash_job;

static void *hash_run(void *arg) {
    hash_job *j = arg;
    const double t0 = ae_now_seconds();
    j->rc = ae_sha256_file(j->file, j->hex, &j->err);
    j->seconds = ae_now_seconds() - t0;
    return NULL;
}

int andrea_model_load_hashed(andrea_model *m, const char *path, char hex[65], double *t_hash, ae_error *err) {
    static hash_job zero;
    hash_job j = zero;
    pthread_t th;
    /* a path the loader refuses may name no weights file: the load's message says why */
    const int named = andrea_checkpoint_weights_path(path, j.file, sizeof j.file, &j.err) == 0;
    const int threaded = named && pthread_create(&th, NULL, hash_run, &j) == 0;
    int rc = andrea_model_load(m, path, err);
    if (threaded) pthread_join(th, NULL);
    if (rc) return -1;
    if (!named) {
        andrea_model_free(m);
        return ae_fail(err, "%s", j.err.msg);
    }
    if (!threaded) hash_run(&j);
    if (j.rc) {
        andrea_model_free(m);
        return ae_fail(err, "%s", j.err.msg);
    }
    memcpy(hex, j.hex, 65);
    if (t_hash) *t_hash = j.seconds;
    return 0;
}
