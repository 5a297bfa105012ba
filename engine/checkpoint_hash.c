/* checkpoint_hash.c — the checkpoint's sha256 on its own thread (see checkpoint_hash.h). */
#include "checkpoint_hash.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    char **files; /* a sharded checkpoint: its n_files files (andrea_sha256_sharded), else NULL */
    int n_files;
};

int andrea_sha256_sharded(const char *const *files, int n, const int *stop, char hex[65], ae_error *err) {
    /* one line per file: 64 hex digits, two spaces, the name, a newline */
    size_t cap = 1, at = 0;
    for (int i = 0; i < n; i++) cap += 64 + 2 + strlen(files[i]) + 1;
    char *lines = malloc(cap);
    if (!lines) return andrea_fail(err, "%s: out of memory", files[0]);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        const char *slash = strrchr(files[i], '/');
        char one[65];
        rc = andrea_sha256_file_until(files[i], stop, one, err);
        if (!rc) at += (size_t)snprintf(lines + at, cap - at, "%s  %s\n", one, slash ? slash + 1 : files[i]);
    }
    if (!rc && andrea_sha256_bytes(lines, at, hex)) rc = andrea_fail(err, "%s: sha256 failed", files[0]);
    free(lines);
    return rc ? -1 : 0;
}

static int hash(andrea_sha_job *j, const int *stop) {
    if (j->files) return andrea_sha256_sharded((const char *const *)j->files, j->n_files, stop, j->hex, &j->err);
    return stop ? andrea_sha256_file_until(j->file, stop, j->hex, &j->err) : andrea_sha256_file(j->file, j->hex, &j->err);
}

static void *run(void *arg) {
    andrea_sha_job *j = arg;
    j->rc = hash(j, &j->stop);
    return NULL;
}

static void free_files(andrea_sha_job *j) {
    for (int i = 0; j->files && i < j->n_files; i++) free(j->files[i]);
    free(j->files);
}

static andrea_sha_job *start(const char *file, const char *const *files, int n) {
    andrea_sha_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    snprintf(j->file, sizeof j->file, "%s", file);
    if (files) {
        j->n_files = n;
        int ok = (j->files = calloc((size_t)n, sizeof *j->files)) != NULL;
        for (int i = 0; ok && i < n; i++) ok = (j->files[i] = strdup(files[i])) != NULL;
        if (!ok) {
            free_files(j);
            free(j);
            return NULL;
        }
    }
    pthread_mutex_init(&j->mu, NULL);
    j->running = pthread_create(&j->thread, NULL, run, j) == 0;
    return j;
}

andrea_sha_job *andrea_sha_job_start(const char *file) { return start(file, NULL, 0); }

andrea_sha_job *andrea_sha_job_start_sharded(const char *const *files, int n) {
    return n > 0 ? start(files[0], files, n) : NULL;
}

int andrea_sha_job_result(andrea_sha_job *j, char hex[65], ae_error *err) {
    pthread_mutex_lock(&j->mu);
    if (!j->done) {
        if (j->running) pthread_join(j->thread, NULL);
        else j->rc = hash(j, NULL); /* no thread was to be had */
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
    free_files(j);
    free(j);
}
