/* checkpoint.c — andrea_model_load: picks the reader for a path, then finishes the model
 * (path, folder, finite check). See checkpoint.h for the contract. */
#include "checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/mpi_shard.h"
#include "../common/sha256.h"
#include "checkpoint_hash.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "andrea reads little-endian checkpoint files straight into memory: little-endian hosts only"
#endif

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Copies the folder part of path ("." when there is none) into dir. */
static void dirname_of(const char *path, char *dir, size_t cap) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, cap, ".");
    } else if (slash == path) {
        snprintf(dir, cap, "/");
    } else {
        snprintf(dir, cap, "%.*s", (int)(slash - path), path);
    }
}

static int join(char *out, size_t cap, const char *dir, const char *name, ae_error *err) {
    int n = snprintf(out, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap) return andrea_fail(err, "%s: path too long", dir);
    return 0;
}

/* The weights file's sha256 starts on a thread as its reading starts (checkpoint_hash.h); under
 * MPI only rank 0 hashes (it broadcasts the result), the others would hash for nothing. */
static andrea_sha_job *hash_beside(const char *file) {
    return andrea_mpi_rank() == 0 ? andrea_sha_job_start(file) : NULL;
}

int andrea_model_load(andrea_model *m, const char *path, ae_error *err) {
    memset(m, 0, sizeof *m);
    if (!path[0]) return andrea_fail(err, "the checkpoint's path is empty"); /* not "andrea: : cannot open" */
    if (strlen(path) >= sizeof m->path) return andrea_fail(err, "%.200s...: path too long", path);
    struct stat st;
    if (stat(path, &st) != 0) return andrea_fail(err, "%s: cannot open: %s", path, strerror(errno));

    char dir[sizeof m->dir], st_path[sizeof m->path], cfg_path[sizeof m->path];
    int rc;
    if (S_ISDIR(st.st_mode)) {
        snprintf(dir, sizeof dir, "%s", path);
        if (join(st_path, sizeof st_path, path, "model.safetensors", err) ||
            join(cfg_path, sizeof cfg_path, path, "config.json", err))
            return -1;
        if (stat(st_path, &st) != 0)
            return andrea_fail(err, "%s: folder holds no model.safetensors (a checkpoint folder needs "
                                "model.safetensors + config.json)", path);
        m->sha_job = hash_beside(st_path);
        rc = andrea_load_safetensors(m, st_path, cfg_path, err);
    } else if (!S_ISREG(st.st_mode)) {
        return andrea_fail(err, "%s: not a regular file or folder", path);
    } else if (ends_with(path, ".safetensors")) {
        dirname_of(path, dir, sizeof dir);
        if (join(cfg_path, sizeof cfg_path, dir, "config.json", err)) return -1;
        m->sha_job = hash_beside(path);
        rc = andrea_load_safetensors(m, path, cfg_path, err);
    } else {
        dirname_of(path, dir, sizeof dir);
        m->sha_job = hash_beside(path);
        rc = andrea_load_bin(m, path, err);
    }
    if (rc) {
        andrea_model_free(m);
        return -1;
    }
    snprintf(m->path, sizeof m->path, "%s", path);
    snprintf(m->dir, sizeof m->dir, "%s", dir);
    /* Padding rows of wte are ignored (llm.c trainers may leave anything there); zeroing them
     * keeps an engine that computes logits over all Vp rows from meeting garbage or NaN. */
    size_t C = (size_t)m->cfg.d_model;
    memset(m->p.wte + (size_t)m->cfg.vocab_size * C, 0,
           (size_t)(m->cfg.padded_vocab_size - m->cfg.vocab_size) * C * sizeof(float));
    /* the safetensors reader checked every value as it converted it (naming the file's tensor) */
    if (m->format != ANDREA_FMT_SAFETENSORS && andrea_model_check_finite(m, err)) {
        andrea_model_free(m);
        return -1;
    }
    return 0;
}

int andrea_checkpoint_weights_path(const char *path, char *out, size_t cap, ae_error *err) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return join(out, cap, path, "model.safetensors", err);
    int n = snprintf(out, cap, "%s", path);
    if (n < 0 || (size_t)n >= cap) return andrea_fail(err, "%s: path too long", path);
    return 0;
}

int andrea_checkpoint_weights_file(const andrea_model *m, char *out, size_t cap, ae_error *err) {
    return andrea_checkpoint_weights_path(m->path, out, cap, err);
}

int andrea_checkpoint_sha256(const andrea_model *m, char hex[65], ae_error *err) {
    if (m->sha_job) return andrea_sha_job_result(m->sha_job, hex, err); /* started by the load */
    char file[sizeof m->path + 32];
    if (andrea_checkpoint_weights_file(m, file, sizeof file, err)) return -1;
    return andrea_sha256_file(file, hex, err);
}
