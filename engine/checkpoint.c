/* checkpoint.c — andrea_model_load: picks the reader for a path, then finishes the model
 * (path, folder, finite check); the checkpoint's identity (sha256) for a model or a path.
 * See checkpoint.h for the contract. */
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

/* What a checkpoint path holds, before anything is read. */
typedef enum { CK_BIN, CK_SAFETENSORS, CK_SHARDED } ck_kind;
typedef struct {
    ck_kind kind;
    int special; /* not a folder nor a regular file (a FIFO, a device): its readers refuse it */
    char dir[4096];    /* the folder of the checkpoint (tokenizer files, config.json) */
    char file[4200];   /* the .bin, the .safetensors, or the shards' index */
    char config[4200]; /* config.json, for the safetensors kinds */
} ck_paths;

/* Picks the reader for path (checkpoint.h): a folder holds model.safetensors, else the shards'
 * index (Hugging Face's from_pretrained prefers model.safetensors too: save_pretrained leaves a
 * stale index behind when it writes one file after shards). */
static int ck_resolve(const char *path, ck_paths *c, ae_error *err) {
    struct stat st;
    memset(c, 0, sizeof *c);
    if (stat(path, &st) != 0) return andrea_fail(err, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        if (strlen(path) >= sizeof c->dir) return andrea_fail(err, "%.200s...: path too long", path);
        snprintf(c->dir, sizeof c->dir, "%s", path);
        if (join(c->file, sizeof c->file, path, "model.safetensors", err)) return -1;
        c->kind = CK_SAFETENSORS;
        if (stat(c->file, &st) != 0) {
            if (join(c->file, sizeof c->file, path, ANDREA_SHARD_INDEX_NAME, err)) return -1;
            if (stat(c->file, &st) != 0)
                return andrea_fail(err, "%s: folder holds no model.safetensors and no %s (a checkpoint folder needs "
                                   "model.safetensors, or the shards and their %s, + config.json)",
                                   path, ANDREA_SHARD_INDEX_NAME, ANDREA_SHARD_INDEX_NAME);
            c->kind = CK_SHARDED;
        }
    } else {
        c->special = !S_ISREG(st.st_mode);
        dirname_of(path, c->dir, sizeof c->dir);
        if (strlen(path) >= sizeof c->file) return andrea_fail(err, "%.200s...: path too long", path);
        snprintf(c->file, sizeof c->file, "%s", path);
        c->kind = ends_with(path, ".safetensors.index.json") ? CK_SHARDED
                  : ends_with(path, ".safetensors")          ? CK_SAFETENSORS
                                                             : CK_BIN;
    }
    return c->kind == CK_BIN ? 0 : join(c->config, sizeof c->config, c->dir, "config.json", err);
}

/* The weights file's sha256 starts on a thread as its reading starts (checkpoint_hash.h); under
 * MPI only rank 0 hashes (it broadcasts the result), the others would hash for nothing. */
static andrea_sha_job *hash_beside(const char *file) {
    return andrea_mpi_rank() == 0 ? andrea_sha_job_start(file) : NULL;
}

/* The sharded reader, its identity hashed beside it from the same file list. */
static int load_sharded(andrea_model *m, const ck_paths *c, ae_error *err) {
    andrea_shard_index ix;
    char **files = NULL;
    int n_files = 0;
    if (andrea_shard_index_read(c->file, &ix, err)) return -1;
    int rc = andrea_shard_paths(c->file, &ix, &files, &n_files, err);
    if (!rc && andrea_mpi_rank() == 0) m->sha_job = andrea_sha_job_start_sharded((const char *const *)files, n_files);
    if (!rc) rc = andrea_load_safetensors_sharded(m, c->file, &ix, c->config, err);
    andrea_shard_paths_free(files, n_files);
    andrea_shard_index_free(&ix);
    return rc;
}

int andrea_model_load(andrea_model *m, const char *path, ae_error *err) {
    memset(m, 0, sizeof *m);
    if (!path[0]) return andrea_fail(err, "the checkpoint's path is empty"); /* not "andrea: : cannot open" */
    if (strlen(path) >= sizeof m->path) return andrea_fail(err, "%.200s...: path too long", path);
    ck_paths c;
    if (ck_resolve(path, &c, err)) return -1;
    if (c.special) return andrea_fail(err, "%s: not a regular file or folder", path);
    int rc;
    if (c.kind == CK_SHARDED) {
        rc = load_sharded(m, &c, err);
    } else {
        m->sha_job = hash_beside(c.file);
        rc = c.kind == CK_SAFETENSORS ? andrea_load_safetensors(m, c.file, c.config, err) : andrea_load_bin(m, c.file, err);
    }
    if (rc) {
        andrea_model_free(m);
        return -1;
    }
    snprintf(m->path, sizeof m->path, "%s", path);
    snprintf(m->dir, sizeof m->dir, "%s", c.dir);
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
    ck_paths c;
    if (ck_resolve(path, &c, err)) return -1;
    int n = snprintf(out, cap, "%s", c.file);
    if (n < 0 || (size_t)n >= cap) return andrea_fail(err, "%s: path too long", path);
    return 0;
}

int andrea_checkpoint_weights_file(const andrea_model *m, char *out, size_t cap, ae_error *err) {
    return andrea_checkpoint_weights_path(m->path, out, cap, err);
}

int andrea_checkpoint_sha256_path(const char *path, char hex[65], ae_error *err) {
    ck_paths c;
    if (ck_resolve(path, &c, err)) return -1;
    if (c.kind != CK_SHARDED) return andrea_sha256_file(c.file, hex, err);
    andrea_shard_index ix;
    char **files = NULL;
    int n_files = 0;
    if (andrea_shard_index_read(c.file, &ix, err)) return -1;
    int rc = andrea_shard_paths(c.file, &ix, &files, &n_files, err);
    if (!rc) rc = andrea_sha256_sharded((const char *const *)files, n_files, NULL, hex, err);
    andrea_shard_paths_free(files, n_files);
    andrea_shard_index_free(&ix);
    return rc;
}

int andrea_checkpoint_sha256(const andrea_model *m, char hex[65], ae_error *err) {
    if (m->sha_job) return andrea_sha_job_result(m->sha_job, hex, err); /* started by the load */
    return andrea_checkpoint_sha256_path(m->path, hex, err);
}
