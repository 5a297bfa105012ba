/* checkpoint_hash.c — the checkpoint's sha256 on its own thread (see checkpoint_hash.h). */
#include "checkpoint_hash.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/sha256.h"

struct andrea_sha_job {
    pthread_t thread;
    pthread_mutex_t mu;
    int running; /* a thread was started and not yet joined */
    int done;    /* rc, hex and err hold the result */
    int stop;    /* set (atomically) to make the thread give up */
    int rc;
    char hex[65];
    ae_error err;
    char file[4200];
};

static void *run(void *arg) {
    andrea_sha_job *j = arg;
    j->rc = andrea_sha256_file_until(j->file, &j->stop, j->hex, &j->err);
    return NULL;
}

andrea_sha_job *andrea_sha_job_start(const char *file) {
    andrea_sha_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    snprintf(j->file, sizeof j->file, "%s", file);
    pthread_mutex_init(&j->mu, NULL);
    j->running = pthread_create(&j->thread, NULL, run, j) == 0;
    return j;
}

int andrea_sha_job_result(andrea_sha_job *j, char hex[65], ae_error *err) {
    pthread_mutex_lock(&j->mu);
    if (!j->done) {
        if (j->running) pthread_join(j->thread, NULL);
        else j->rc = andrea_sha256_file(j->file, j->hex, &j->err); /* no thread was to be had */
        j->running = 0;
        j->done = 1;
    }
    const int rc = j->rc;
    if (rc) *err = j->err;
    else snprintf(hex, 65, "%s", j->hex);
    pthread_mutex_unlock(&j->mu);
    return rc ? -1 : 0;
}

void andrea_sha_job_free(andrea_sha_job *j) {
    if (!j) return;
    __atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED);
    if (j->running) pthread_join(j->thread, NULL);
    pthread_mutex_destroy(&j->mu);
    free(j);
}
