/* checkpoint_index.c — Hugging Face's model.safetensors.index.json, read strictly (checkpoint.h).
 *
 * The index of a sharded checkpoint maps every tensor to the shard file that holds it:
 *   {"metadata": {"total_size": 6230624256}, "weight_map": {"h.0.ln_1.weight": "model-00001-of-00002.safetensors", ...}}
 * Invariants after andrea_shard_index_read: the file was a regular file of at most
 * ANDREA_CONFIG_JSON_MAX bytes and strict JSON (no key given twice: a tensor cannot be mapped twice);
 * weight_map holds at least one tensor; every shard name is a plain file name of the index's folder
 * ending in .safetensors (so the shards can only be files beside the index, and `sha256sum`
 * prints their names as they are: the identity, checkpoint_hash.h); at most ANDREA_MAX_SHARDS
 * distinct shards (the loader keeps one descriptor open per shard); names and shards sorted
 * bytewise, so the same index always gives the same order. Other keys (metadata's
 * total_parameters, ...) are read by nothing here.
 * Failure contract: -1 with one line "INDEX: problem" (the tensor named where one is at fault);
 * ix left zeroed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/printable.h"
#include "../common/strict_input.h"
#include "checkpoint.h"

/* The file, read whole (at most ANDREA_CONFIG_JSON_MAX bytes); NULL with err on failure. */
static char *slurp(const char *path, size_t *len, ae_error *err) {
    FILE *f = andrea_fopen_regular(path, err); /* a FIFO or folder is refused, never waited on */
    if (!f) return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fileno(f), &st) != 0) {
        andrea_fail(err, "%s: cannot stat: %s", path, strerror(errno));
    } else if ((unsigned long long)st.st_size > ANDREA_CONFIG_JSON_MAX) {
        andrea_fail(err, "%s: %lld bytes, too large for a shard index (limit %u)", path, (long long)st.st_size,
                    ANDREA_CONFIG_JSON_MAX);
    } else if (!(buf = malloc((size_t)st.st_size + 1))) {
        andrea_fail(err, "%s: out of memory", path);
    } else if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        andrea_fail(err, "%s: read error", path);
        free(buf);
        buf = NULL;
    } else {
        buf[st.st_size] = '\0';
        *len = (size_t)st.st_size;
    }
    fclose(f);
    return buf;
}

/* NULL when `name` can be a shard: a file name of the index's own folder (no '/', not "." or
 * "..", no '\\' or control byte, which sha256sum would escape) ending in ".safetensors"; else why not. */
static const char *bad_shard_name(const char *name) {
    size_t n = strlen(name);
    if (n == 0) return "is empty";
    if (strchr(name, '/')) return "holds '/' (a shard must be a file in the index's folder)";
    if (!strcmp(name, ".") || !strcmp(name, "..")) return "is not a file name (a shard must be a file in the index's folder)";
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == '\\') return "holds a control byte or '\\'";
    if (n < 12 || strcmp(name + n - 12, ".safetensors") != 0) return "does not end in .safetensors";
    return NULL;
}

typedef struct {
    const char *name, *shard; /* point into the cJSON tree */
} ix_pair;

static int by_name(const void *a, const void *b) { return strcmp(((const ix_pair *)a)->name, ((const ix_pair *)b)->name); }
static int by_shard(const void *a, const void *b) {
    return strcmp(((const ix_pair *)a)->shard, ((const ix_pair *)b)->shard);
}
static int by_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* metadata (optional): an object; its total_size (optional) digits only, below 2^53. */
static int read_metadata(const cJSON *root, andrea_shard_index *ix, const char *path, ae_error *err) {
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    if (!meta || cJSON_IsNull(meta)) return 0;
    if (!cJSON_IsObject(meta)) return andrea_fail(err, "%s: \"metadata\" is not an object", path);
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(meta, "total_size");
    if (!ts || cJSON_IsNull(ts)) return 0;
    if (!andrea_json_is_digits_only(ts) || ts->valuedouble >= 9007199254740992.0)
        return andrea_fail(err, "%s: metadata.total_size is not a byte count written in digits (below 2^53)", path);
    ix->has_total_size = 1;
    ix->total_size = (size_t)ts->valuedouble;
    return 0;
}

/* weight_map's pairs, checked one by one, into a malloc'd array of *n. */
static ix_pair *read_pairs(const cJSON *root, size_t *n, const char *path, ae_error *err) {
    const cJSON *wm = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!cJSON_IsObject(wm) || !wm->child) {
        andrea_fail(err, "%s: no \"weight_map\" (an object mapping each tensor to its shard file)", path);
        return NULL;
    }
    size_t count = (size_t)cJSON_GetArraySize(wm);
    ix_pair *pairs = malloc(count * sizeof *pairs);
    if (!pairs) {
        andrea_fail(err, "%s: out of memory", path);
        return NULL;
    }
    size_t k = 0;
    for (const cJSON *it = wm->child; it; it = it->next, k++) {
        char shown[112], shard[112];
        andrea_printable(it->string, shown, sizeof shown);
        const char *why = cJSON_IsString(it) ? bad_shard_name(it->valuestring) : NULL;
        if (!cJSON_IsString(it))
            andrea_fail(err, "%s: tensor %s: its shard is not a string (a file name)", path, shown);
        else if (why)
            andrea_fail(err, "%s: tensor %s: shard name \"%s\" %s", path, shown,
                        andrea_printable(it->valuestring, shard, sizeof shard), why);
        if (!cJSON_IsString(it) || why) {
            free(pairs);
            return NULL;
        }
        pairs[k] = (ix_pair){it->string, it->valuestring};
    }
    *n = k;
    return pairs;
}

/* The distinct shards of pairs (sorted by shard) into ix->shards; ix->shard_of after sorting by name. */
static int fill_index(ix_pair *pairs, size_t n, andrea_shard_index *ix, const char *path, ae_error *err) {
    qsort(pairs, n, sizeof *pairs, by_shard);
    size_t n_shards = 0;
    for (size_t i = 0; i < n; i++) n_shards += i == 0 || strcmp(pairs[i].shard, pairs[i - 1].shard) != 0;
    if (n_shards > ANDREA_MAX_SHARDS)
        return andrea_fail(err, "%s: %zu shards (andrea reads at most %d)", path, n_shards, ANDREA_MAX_SHARDS);
    ix->shards = calloc(n_shards, sizeof *ix->shards);
    ix->names = calloc(n, sizeof *ix->names);
    ix->shard_of = calloc(n, sizeof *ix->shard_of);
    if (!ix->shards || !ix->names || !ix->shard_of) return andrea_fail(err, "%s: out of memory", path);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(pairs[i].shard, pairs[i - 1].shard) != 0)
            if (!(ix->shards[ix->n_shards++] = strdup(pairs[i].shard))) return andrea_fail(err, "%s: out of memory", path);
    qsort(pairs, n, sizeof *pairs, by_name);
    for (size_t i = 0; i < n; i++) {
        char **hit = bsearch(&pairs[i].shard, ix->shards, (size_t)ix->n_shards, sizeof *ix->shards, by_str);
        ix->shard_of[i] = (int)(hit - ix->shards);
        if (!(ix->names[i] = strdup(pairs[i].name))) return andrea_fail(err, "%s: out of memory", path);
        ix->n_tensors = i + 1;
    }
    return 0;
}

int andrea_shard_index_read(const char *path, andrea_shard_index *ix, ae_error *err) {
    memset(ix, 0, sizeof *ix);
    size_t len = 0, n = 0, bad_at;
    char *text = slurp(path, &len, err), why[160];
    if (!text) return -1;
    cJSON *root = andrea_json_parse_strict(text, len, 1, &bad_at, why, sizeof why);
    ix_pair *pairs = NULL;
    int rc = -1;
    if (!root && bad_at != SIZE_MAX) andrea_fail(err, "%s: not a JSON object (invalid JSON near byte %zu)", path, bad_at);
    else if (!root) andrea_fail(err, "%s: %s", path, why);
    else if (!cJSON_IsObject(root)) andrea_fail(err, "%s: not a JSON object", path);
    else if (!read_metadata(root, ix, path, err) && (pairs = read_pairs(root, &n, path, err)) != NULL)
        rc = fill_index(pairs, n, ix, path, err);
    free(pairs);
    cJSON_Delete(root);
    free(text);
    if (rc) andrea_shard_index_free(ix);
    return rc;
}

long andrea_shard_index_find(const andrea_shard_index *ix, const char *name) {
    char **hit = bsearch(&name, ix->names, ix->n_tensors, sizeof *ix->names, by_str);
    return hit ? (long)(hit - ix->names) : -1;
}

void andrea_shard_index_free(andrea_shard_index *ix) {
    for (int i = 0; ix->shards && i < ix->n_shards; i++) free(ix->shards[i]);
    for (size_t i = 0; ix->names && i < ix->n_tensors; i++) free(ix->names[i]);
    free(ix->shards);
    free(ix->names);
    free(ix->shard_of);
    memset(ix, 0, sizeof *ix);
}

int andrea_shard_paths(const char *index_path, const andrea_shard_index *ix, char ***paths, int *n, ae_error *err) {
    const char *slash = strrchr(index_path, '/');
    const int dir_len = slash ? (int)(slash - index_path) : 1;
    const char *dir = slash ? index_path : ".";
    char **p = calloc((size_t)ix->n_shards + 1, sizeof *p);
    if (!p) return andrea_fail(err, "%s: out of memory", index_path);
    int ok = (p[0] = strdup(index_path)) != NULL;
    for (int k = 0; ok && k < ix->n_shards; k++) {
        size_t cap = (size_t)dir_len + strlen(ix->shards[k]) + 2;
        ok = (p[1 + k] = malloc(cap)) != NULL;
        if (ok) snprintf(p[1 + k], cap, "%.*s/%s", dir_len, dir, ix->shards[k]);
    }
    if (!ok) {
        andrea_shard_paths_free(p, ix->n_shards + 1);
        return andrea_fail(err, "%s: out of memory", index_path);
    }
    *paths = p;
    *n = ix->n_shards + 1;
    return 0;
}

void andrea_shard_paths_free(char **paths, int n) {
    for (int i = 0; paths && i < n; i++) free(paths[i]);
    free(paths);
}
