/* checkpoint_fixtures.h — small helpers the checkpoint tests share to make good files and then
 * spoil them one way each (tests make their own bad inputs; nothing is checked in).
 * All functions abort the test process on an I/O error of their own: a broken fixture is a
 * broken test, not a finding about the loader. */
#ifndef ANDREA_TEST_CHECKPOINT_FIXTURES_H
#define ANDREA_TEST_CHECKPOINT_FIXTURES_H

#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../engine/model.h"
#include "support/model_random.h"

static void fx_die(const char *what, const char *path) {
    fprintf(stderr, "fixture: %s: %s\n", what, path);
    exit(2);
}

/* A tiny valid config: 2 layers, 2 heads of 4, vocab 13 padded to 16, 10 positions. */
static inline andrea_config fx_tiny_config(void) {
    andrea_config c = {.max_seq_len = 10, .vocab_size = 13, .padded_vocab_size = 16,
                       .n_layer = 2, .n_head = 2, .d_model = 8, .head_dim = 4};
    return c;
}

/* "<tmpdir>/<name>" in a static rotating buffer (enough for a few live paths at a time). */
static inline const char *fx_path(const char *dir, const char *name) {
    static char bufs[8][512];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, 512, "%s/%s", dir, name);
    return b;
}

static inline unsigned char *fx_read(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) fx_die("cannot open", path);
    struct stat st;
    if (fstat(fileno(f), &st)) fx_die("cannot stat", path);
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) fx_die("cannot read", path);
    fclose(f);
    *len = (size_t)st.st_size;
    return buf;
}

static inline void fx_write(const char *path, const void *buf, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) fx_die("cannot write", path);
}

static inline void fx_write_text(const char *path, const char *text) { fx_write(path, text, strlen(text)); }

/* Writes a random tiny model as .bin version `version` to path; returns the model (caller frees). */
static inline andrea_model fx_make_bin(const char *path, const andrea_config *cfg, int version) {
    andrea_model m;
    ae_error err = {{0}};
    if (andrea_model_init_random(&m, cfg, 42, &err) || andrea_model_save_bin(&m, path, version, &err))
        fx_die(err.msg, path);
    return m;
}

/* Rewrites a safetensors file: its JSON header goes through `edit` (which may change it in
 * place), and `extra` bytes (may be NULL/0) are appended after the data section. */
static inline void fx_edit_safetensors(const char *path, void (*edit)(cJSON *hdr, void *arg), void *arg,
                                       const void *extra, size_t extra_len) {
    size_t len;
    unsigned char *buf = fx_read(path, &len);
    uint64_t n;
    memcpy(&n, buf, 8);
    cJSON *hdr = cJSON_ParseWithLength((const char *)buf + 8, (size_t)n);
    if (!hdr) fx_die("fixture header is not JSON", path);
    if (edit) edit(hdr, arg);
    char *text = cJSON_PrintUnformatted(hdr);
    size_t tl = strlen(text), data_len = len - 8 - (size_t)n;
    uint64_t nn = tl;
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(&nn, 8, 1, f) != 1 || fwrite(text, 1, tl, f) != tl ||
        fwrite(buf + 8 + n, 1, data_len, f) != data_len ||
        (extra_len && fwrite(extra, 1, extra_len, f) != extra_len) || fclose(f))
        fx_die("cannot rewrite", path);
    cJSON_free(text);
    cJSON_Delete(hdr);
    free(buf);
}

/* Overwrites element `index` of an F32 tensor of a safetensors file with v (the file's own
 * bytes: no andrea writer involved). */
static inline void fx_poke_f32(const char *file, const char *tensor, size_t index, float v) {
    size_t len;
    unsigned char *buf = fx_read(file, &len);
    uint64_t n;
    memcpy(&n, buf, 8);
    cJSON *hdr = cJSON_ParseWithLength((const char *)buf + 8, (size_t)n);
    cJSON *offs = cJSON_GetObjectItem(cJSON_GetObjectItem(hdr, tensor), "data_offsets");
    if (!offs) fx_die("no such tensor in the fixture", file);
    size_t begin = (size_t)cJSON_GetArrayItem(offs, 0)->valuedouble;
    memcpy(buf + 8 + n + begin + 4 * index, &v, 4);
    fx_write(file, buf, len);
    cJSON_Delete(hdr);
    free(buf);
}

/* Size of the data section of a safetensors file. */
static inline size_t fx_safetensors_data_len(const char *path) {
    size_t len;
    unsigned char *buf = fx_read(path, &len);
    uint64_t n;
    memcpy(&n, buf, 8);
    free(buf);
    return len - 8 - (size_t)n;
}

static inline int fx_contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

#endif
