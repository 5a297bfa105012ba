/* test_checkpoint_sharded — Hugging Face's sharded safetensors (model.safetensors.index.json + the
 * shards it names) load to the same model as one model.safetensors of the same weights (F32, F16,
 * BF16; 2 and 3 shards), with the same forward; the identity is the documented sha256 of the
 * files' sha256 lines; every bad index or shard is refused with one line naming the file.
 * The fixtures are made here: a random model written as one file (tests/support), then cut into
 * shards by fx_shard below (tensors in file order, each shard its own header and data section). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/sha256.h"
#include "../engine/checkpoint.h"
#include "../engine/forward.h"
#include "check.h"
#include "checkpoint_fixtures.h"

#define SHARD_NAME_FMT "model-%05d-of-%05d.safetensors"

typedef struct {
    const cJSON *item;
    size_t begin, end;
} fx_tensor;

static int by_begin(const void *a, const void *b) {
    const fx_tensor *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Writes one safetensors file from the tensors t[0..n) of the file whose data section is `data`. */
static void fx_write_shard(const char *path, const fx_tensor *t, int n, const unsigned char *data) {
    cJSON *hdr = cJSON_CreateObject();
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        cJSON *e = cJSON_Duplicate(t[i].item, 1);
        cJSON *offs = cJSON_CreateArray();
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)at));
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(at + t[i].end - t[i].begin)));
        cJSON_ReplaceItemInObjectCaseSensitive(e, "data_offsets", offs);
        cJSON_AddItemToObject(hdr, t[i].item->string, e);
        at += t[i].end - t[i].begin;
    }
    char *text = cJSON_PrintUnformatted(hdr);
    uint64_t hl = strlen(text);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(&hl, 8, 1, f) != 1 || fwrite(text, 1, hl, f) != hl) fx_die("cannot write", path);
    for (int i = 0; i < n; i++)
        if (t[i].end > t[i].begin && fwrite(data + t[i].begin, 1, t[i].end - t[i].begin, f) != t[i].end - t[i].begin)
            fx_die("cannot write", path);
    if (fclose(f)) fx_die("cannot write", path);
    cJSON_free(text);
    cJSON_Delete(hdr);
}

/* DST (created): SRC's config.json, SRC/model.safetensors cut into n_shards shards of about equal
 * tensor counts in file order, and their index with metadata.total_size. */
static void fx_shard(const char *src, const char *dst, int n_shards) {
    mkdir(dst, 0755);
    size_t len;
    unsigned char *cfg = fx_read(fx_path(src, "config.json"), &len);
    fx_write(fx_path(dst, "config.json"), cfg, len);
    free(cfg);
    unsigned char *buf = fx_read(fx_path(src, "model.safetensors"), &len);
    uint64_t hl;
    memcpy(&hl, buf, 8);
    cJSON *hdr = cJSON_ParseWithLength((const char *)buf + 8, (size_t)hl);
    if (!hdr) fx_die("fixture header is not JSON", src);
    fx_tensor t[512];
    int n = 0;
    size_t total = 0;
    for (const cJSON *it = hdr->child; it && n < 512; it = it->next) {
        if (!strcmp(it->string, "__metadata__")) continue;
        const cJSON *offs = cJSON_GetObjectItem(it, "data_offsets");
        t[n] = (fx_tensor){it, (size_t)cJSON_GetArrayItem(offs, 0)->valuedouble,
                           (size_t)cJSON_GetArrayItem(offs, 1)->valuedouble};
        total += t[n].end - t[n].begin;
        n++;
    }
    qsort(t, (size_t)n, sizeof *t, by_begin);
    cJSON *index = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(index, "metadata");
    cJSON_AddNumberToObject(meta, "total_size", (double)total);
    cJSON *wm = cJSON_AddObjectToObject(index, "weight_map");
    for (int k = 0, i0 = 0; k < n_shards; k++) {
        const int i1 = (int)((long)n * (k + 1) / n_shards);
        char name[64];
        snprintf(name, sizeof name, SHARD_NAME_FMT, k + 1, n_shards);
        fx_write_shard(fx_path(dst, name), t + i0, i1 - i0, buf + 8 + hl);
        for (int i = i0; i < i1; i++) cJSON_AddStringToObject(wm, t[i].item->string, name);
        i0 = i1;
    }
    char *text = cJSON_Print(index);
    fx_write_text(fx_path(dst, ANDREA_SHARD_INDEX_NAME), text);
    cJSON_free(text);
    cJSON_Delete(index);
    cJSON_Delete(hdr);
    free(buf);
}

/* A random tiny model saved as one file in DIR/<name>-one (dtype, with the transformer. prefix)
 * and as n_shards shards in DIR/<name>; returns the sharded folder. */
static const char *make_pair(const char *name, const char *dtype, int n_shards, char *one, size_t cap) {
    static char dirs[4][512];
    static int k;
    char *dir = dirs[k++ % 4];
    snprintf(dir, 512, "%s/%s", check_tmpdir(), name);
    snprintf(one, cap, "%s-one", dir);
    andrea_config cfg = fx_tiny_config();
    andrea_model m;
    ae_error err = {{0}};
    if (andrea_model_init_random(&m, &cfg, 23, &err) || andrea_model_save_safetensors(&m, one, dtype, 1, &err))
        fx_die(err.msg, one);
    andrea_model_free(&m);
    fx_shard(one, dir, n_shards);
    return dir;
}

static const char *make_sharded(const char *name) {
    char one[512];
    return make_pair(name, "F32", 2, one, sizeof one);
}

static const char *shard_path(const char *dir, int k, int n) {
    char name[64];
    snprintf(name, sizeof name, SHARD_NAME_FMT, k, n);
    return fx_path(dir, name);
}

/* The logits of one forward of fixed tokens through the CPU engine ([T, V], caller frees). */
static float *forward_logits(const andrea_model *m, int T) {
    int tok[10];
    for (int t = 0; t < T; t++) tok[t] = (t * 7 + 3) % m->cfg.vocab_size;
    float *logits = calloc((size_t)T * (size_t)m->cfg.vocab_size, sizeof(float));
    ae_error err = {{0}};
    andrea_engine *e = andrea_cpu_engine_open(m, 1, T, &err);
    CHECK_MSG(e != NULL, "%s", err.msg);
    andrea_forward_io io = {.B = 1, .T = T, .tokens = tok, .logits = logits};
    CHECK_MSG(e && andrea_engine_forward(e, &io, &err) == 0, "%s", err.msg);
    andrea_engine_close(e);
    return logits;
}

static void same_model(const char *dtype, int n_shards, const char *want_dtype) {
    char one[512], name[64];
    snprintf(name, sizeof name, "same-%s-%d", dtype, n_shards);
    const char *dir = make_pair(name, dtype, n_shards, one, sizeof one);
    andrea_model a, b;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&a, one, &err) == 0, "%s", err.msg);
    CHECK_MSG(andrea_model_load(&b, dir, &err) == 0, "%s: %s", dir, err.msg);
    if (!a.memory || !b.memory) return;
    CHECK(a.n_floats == b.n_floats && memcmp(&a.cfg, &b.cfg, sizeof a.cfg) == 0);
    CHECK_MSG(memcmp(a.memory, b.memory, a.n_floats * sizeof(float)) == 0, "%s, %d shards: weights differ", dtype,
              n_shards);
    CHECK_MSG(!strcmp(b.stored_dtype, want_dtype), "stored_dtype %s, want %s", b.stored_dtype, want_dtype);
    CHECK(b.format == ANDREA_FMT_SAFETENSORS && !strcmp(b.dir, dir));
    const int T = 7;
    float *la = forward_logits(&a, T), *lb = forward_logits(&b, T);
    CHECK_MSG(memcmp(la, lb, (size_t)T * (size_t)a.cfg.vocab_size * sizeof(float)) == 0,
              "%s, %d shards: the forwards differ", dtype, n_shards);
    free(la);
    free(lb);
    andrea_model_free(&a);
    andrea_model_free(&b);
}

static void test_sharded_loads_the_same_model_as_one_file(void) {
    same_model("F32", 2, "fp32");
    same_model("F32", 3, "fp32");
    same_model("F16", 2, "fp16");
    same_model("BF16", 3, "bf16");
}

static void test_the_index_path_loads_like_its_folder(void) {
    const char *dir = make_sharded("by-index");
    andrea_model a, b;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&a, dir, &err) == 0, "%s", err.msg);
    CHECK_MSG(andrea_model_load(&b, fx_path(dir, ANDREA_SHARD_INDEX_NAME), &err) == 0, "%s", err.msg);
    CHECK(a.memory && b.memory && memcmp(a.memory, b.memory, a.n_floats * sizeof(float)) == 0);
    CHECK(!strcmp(b.dir, dir));
    char ha[65] = "", hb[65] = "";
    CHECK(andrea_checkpoint_sha256(&a, ha, &err) == 0 && andrea_checkpoint_sha256(&b, hb, &err) == 0);
    CHECK_MSG(!strcmp(ha, hb), "%s vs %s", ha, hb);
    andrea_model_free(&a);
    andrea_model_free(&b);
}

/* The identity as docs/checkpoints.md defines it, computed here from the files' own sha256. */
static void documented_identity(const char *dir, int n_shards, char hex[65]) {
    char lines[4096] = "", one[65];
    size_t at = 0;
    ae_error err = {{0}};
    for (int k = 0; k <= n_shards; k++) {
        const char *path = k ? shard_path(dir, k, n_shards) : fx_path(dir, ANDREA_SHARD_INDEX_NAME);
        CHECK_MSG(andrea_sha256_file(path, one, &err) == 0, "%s", err.msg);
        at += (size_t)snprintf(lines + at, sizeof lines - at, "%s  %s\n", one, strrchr(path, '/') + 1);
    }
    CHECK(andrea_sha256_bytes(lines, at, hex) == 0);
}

static void test_identity_is_the_sha256_of_the_files_sha256_lines(void) {
    const char *dir = make_sharded("identity");
    char want[65], got[65] = "", again[65] = "", by_path[65] = "";
    documented_identity(dir, 2, want);
    andrea_model m;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&m, dir, &err) == 0, "%s", err.msg);
    CHECK(m.sha_job != NULL); /* hashed beside the load */
    CHECK_MSG(andrea_checkpoint_sha256(&m, got, &err) == 0, "%s", err.msg);
    CHECK_MSG(!strcmp(got, want), "identity %s, documented %s", got, want);
    andrea_model_free(&m);
    CHECK(andrea_model_load(&m, dir, &err) == 0 && andrea_checkpoint_sha256(&m, again, &err) == 0);
    andrea_model_free(&m);
    CHECK(!strcmp(again, want));
    CHECK_MSG(andrea_checkpoint_sha256_path(dir, by_path, &err) == 0 && !strcmp(by_path, want), "%s", err.msg);
    char weights[4200];
    CHECK(andrea_checkpoint_weights_path(dir, weights, sizeof weights, &err) == 0 &&
          !strcmp(weights, fx_path(dir, ANDREA_SHARD_INDEX_NAME)));
    /* the shell's own tools agree (docs/checkpoints.md gives this command) */
    char cmd[2048], out[128] = "";
    snprintf(cmd, sizeof cmd,
             "cd '%s' && command -v sha256sum >/dev/null && sha256sum %s " SHARD_NAME_FMT " " SHARD_NAME_FMT
             " | sha256sum",
             dir, ANDREA_SHARD_INDEX_NAME, 1, 2, 2, 2);
    FILE *p = popen(cmd, "r");
    if (p && fgets(out, sizeof out, p) && strlen(out) >= 64) {
        CHECK_MSG(!strncmp(out, want, 64), "sha256sum | sha256sum: %.64s, andrea: %s", out, want);
    } else {
        fprintf(stderr, "  (no sha256sum here: the shell cross-check is skipped)\n");
    }
    if (p) pclose(p);
}

static void test_a_folder_with_model_safetensors_ignores_a_stale_index(void) {
    char one[512];
    const char *dir = make_pair("stale-index", "F32", 2, one, sizeof one);
    size_t len;
    unsigned char *idx = fx_read(fx_path(dir, ANDREA_SHARD_INDEX_NAME), &len);
    fx_write(fx_path(one, ANDREA_SHARD_INDEX_NAME), idx, len); /* names shards that are not there */
    free(idx);
    andrea_model m;
    ae_error err = {{0}};
    char got[65] = "", want[65] = "";
    CHECK_MSG(andrea_model_load(&m, one, &err) == 0, "%s", err.msg);
    CHECK(andrea_checkpoint_sha256(&m, got, &err) == 0);
    CHECK(andrea_sha256_file(fx_path(one, "model.safetensors"), want, &err) == 0 && !strcmp(got, want));
    andrea_model_free(&m);
}

/* ---- refusals: one line, naming the file at fault ---- */

static void expect_refusal(const char *path, const char *file, const char *want, const char *want2) {
    andrea_model m;
    ae_error err = {{0}};
    int rc = andrea_model_load(&m, path, &err);
    CHECK(rc == -1);
    fprintf(stderr, "  refused: %s\n", err.msg + strlen(check_tmpdir()) + 1);
    CHECK_MSG(strncmp(err.msg, file, strlen(file)) == 0 && err.msg[strlen(file)] == ':',
              "message does not start with %s: %s", file, err.msg);
    CHECK_MSG(fx_contains(err.msg, want), "want \"%s\" in: %s", want, err.msg);
    if (want2) CHECK_MSG(fx_contains(err.msg, want2), "want \"%s\" in: %s", want2, err.msg);
    CHECK(strchr(err.msg, '\n') == NULL);
    CHECK(m.memory == NULL);
}

static const char *index_of(const char *dir) { return fx_path(dir, ANDREA_SHARD_INDEX_NAME); }

/* Rewrites DIR's index through edit (which changes the parsed tree in place). */
static void edit_index(const char *dir, void (*edit)(cJSON *ix, void *arg), void *arg) {
    size_t len;
    unsigned char *buf = fx_read(index_of(dir), &len);
    cJSON *ix = cJSON_ParseWithLength((const char *)buf, len);
    if (!ix) fx_die("index is not JSON", dir);
    edit(ix, arg);
    char *text = cJSON_PrintUnformatted(ix);
    fx_write_text(index_of(dir), text);
    cJSON_free(text);
    cJSON_Delete(ix);
    free(buf);
}

/* arg: "TENSOR=SHARD" sets the tensor's shard (adds the tensor when absent); "TENSOR" deletes it. */
static void set_shard(cJSON *ix, void *arg) {
    char key[256];
    snprintf(key, sizeof key, "%s", (const char *)arg);
    cJSON *wm = cJSON_GetObjectItem(ix, "weight_map");
    char *eq = strchr(key, '=');
    if (!eq) {
        cJSON_DeleteItemFromObjectCaseSensitive(wm, key);
        return;
    }
    *eq = 0;
    cJSON_DeleteItemFromObjectCaseSensitive(wm, key);
    cJSON_AddStringToObject(wm, key, eq + 1);
}

static void set_total_size(cJSON *ix, void *arg) {
    cJSON *meta = cJSON_GetObjectItem(ix, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "total_size");
    if (arg) cJSON_AddItemToObject(meta, "total_size", cJSON_CreateRaw((const char *)arg));
}

static void drop_key(cJSON *ix, void *arg) { cJSON_DeleteItemFromObjectCaseSensitive(ix, (const char *)arg); }

static void test_shard_names_outside_the_folder_are_refused(void) {
    static const struct { const char *shard, *why; } bad[] = {
        {"../model-00001-of-00002.safetensors", "holds '/'"},
        {"sub/model-00001-of-00002.safetensors", "holds '/'"},
        {"/etc/passwd.safetensors", "holds '/'"},
        {"..", "is not a file name"},
        {"config.json", "does not end in .safetensors"},
        {"", "is empty"},
        {"a\\b.safetensors", "control byte or '\\'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char dirname[32], arg[256];
        snprintf(dirname, sizeof dirname, "bad-name-%zu", i);
        const char *dir = make_sharded(dirname);
        snprintf(arg, sizeof arg, "transformer.wte.weight=%s", bad[i].shard);
        edit_index(dir, set_shard, arg);
        expect_refusal(dir, index_of(dir), "tensor transformer.wte.weight: shard name", bad[i].why);
    }
    const char *dir = make_sharded("bad-name-number");
    edit_index(dir, set_shard, "transformer.wte.weight"); /* then add it back as a number */
    size_t len;
    char *text = (char *)fx_read(index_of(dir), &len), *wm;
    text[len] = 0;
    wm = strstr(text, "\"weight_map\":{");
    char patched[65536];
    snprintf(patched, sizeof patched, "%.*s\"transformer.wte.weight\":7,%s", (int)(wm + 14 - text), text, wm + 14);
    fx_write_text(index_of(dir), patched);
    free(text);
    expect_refusal(dir, index_of(dir), "tensor transformer.wte.weight: its shard is not a string", NULL);
}

static void test_a_missing_shard_is_refused_naming_it(void) {
    const char *dir = make_sharded("missing-shard");
    unlink(shard_path(dir, 2, 2));
    expect_refusal(dir, shard_path(dir, 2, 2), "cannot open", NULL);
}

static void test_a_fifo_in_place_of_a_shard_or_the_index_is_refused(void) {
    const char *dir = make_sharded("fifo-shard");
    unlink(shard_path(dir, 1, 2));
    CHECK(mkfifo(shard_path(dir, 1, 2), 0600) == 0);
    expect_refusal(dir, shard_path(dir, 1, 2), "not a regular file", NULL);
    dir = make_sharded("fifo-index");
    unlink(index_of(dir));
    CHECK(mkfifo(index_of(dir), 0600) == 0);
    expect_refusal(dir, index_of(dir), "not a regular file", NULL);
}

static void test_two_names_of_one_shard_file_are_refused(void) {
    const char *dir = make_sharded("same-file");
    unlink(shard_path(dir, 2, 2));
    CHECK(symlink("model-00001-of-00002.safetensors", shard_path(dir, 2, 2)) == 0);
    expect_refusal(dir, shard_path(dir, 2, 2), "the same file as shard model-00001-of-00002.safetensors", NULL);
}

static void test_a_tensor_the_index_maps_to_a_shard_that_lacks_it_is_refused(void) {
    const char *dir = make_sharded("not-in-shard");
    edit_index(dir, set_shard, "transformer.h.0.attn.bias=model-00001-of-00002.safetensors");
    expect_refusal(dir, index_of(dir), "tensor transformer.h.0.attn.bias: missing from shard model-00001-of-00002",
                   NULL);
}

static void test_a_tensor_mapped_to_another_shard_is_refused(void) {
    const char *dir = make_sharded("wrong-shard");
    edit_index(dir, set_shard, "transformer.wte.weight=model-00002-of-00002.safetensors");
    expect_refusal(dir, shard_path(dir, 1, 2), "tensor transformer.wte.weight: the index maps it to shard model-00002", NULL);
}

/* Copies tensor `arg` (of shard 1) into shard 2 too: its header entry and its bytes. */
static const unsigned char *copy_bytes;
static size_t copy_len, copy_at;
static void add_copy(cJSON *hdr, void *arg) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "dtype", "F32");
    cJSON *shape = cJSON_AddArrayToObject(e, "shape");
    cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)(copy_len / 4)));
    cJSON *offs = cJSON_AddArrayToObject(e, "data_offsets");
    cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)copy_at));
    cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(copy_at + copy_len)));
    cJSON_AddItemToObject(hdr, (const char *)arg, e);
}

static void test_a_tensor_in_two_shards_is_refused(void) {
    const char *dir = make_sharded("two-shards");
    const float ln[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    copy_bytes = (const unsigned char *)ln;
    copy_len = sizeof ln;
    copy_at = fx_safetensors_data_len(shard_path(dir, 2, 2));
    /* transformer.h.0.ln_1.weight is in shard 1 (the first tensors in file order) */
    fx_edit_safetensors(shard_path(dir, 2, 2), add_copy, "transformer.h.0.ln_1.weight", copy_bytes, copy_len);
    expect_refusal(dir, shard_path(dir, 2, 2), "tensor transformer.h.0.ln_1.weight:",
                   "a tensor in two shards, or in the wrong one");
}

static void test_a_shard_holding_a_tensor_the_index_does_not_list_is_refused(void) {
    const char *dir = make_sharded("unlisted");
    edit_index(dir, set_shard, "transformer.ln_f.bias"); /* the last tensor: in shard 2 */
    expect_refusal(dir, shard_path(dir, 2, 2), "tensor transformer.ln_f.bias: not in the index's weight_map", NULL);
}

static void test_a_wrong_total_size_is_refused_and_none_is_fine(void) {
    const char *dir = make_sharded("total-size");
    edit_index(dir, set_total_size, "12");
    expect_refusal(dir, index_of(dir), "metadata.total_size is 12 bytes, but the shards' tensors hold", NULL);
    edit_index(dir, set_total_size, "1.2e3");
    expect_refusal(dir, index_of(dir), "metadata.total_size is not a byte count written in digits", NULL);
    edit_index(dir, set_total_size, NULL);
    andrea_model m;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&m, dir, &err) == 0, "%s", err.msg);
    andrea_model_free(&m);
    edit_index(dir, drop_key, "metadata");
    CHECK_MSG(andrea_model_load(&m, dir, &err) == 0, "%s", err.msg);
    andrea_model_free(&m);
}

static void test_an_index_that_is_not_an_index_is_refused(void) {
    const char *dir = make_sharded("no-weight-map");
    edit_index(dir, drop_key, "weight_map");
    expect_refusal(dir, index_of(dir), "no \"weight_map\"", NULL);
    dir = make_sharded("index-not-json");
    fx_write_text(index_of(dir), "{\"weight_map\": {");
    expect_refusal(dir, index_of(dir), "not a JSON object", NULL);
    dir = make_sharded("index-dup-key");
    fx_write_text(index_of(dir), "{\"weight_map\": {\"a\": \"x.safetensors\", \"a\": \"y.safetensors\"}}");
    expect_refusal(dir, index_of(dir), "given twice", NULL);
    dir = make_sharded("index-too-large");
    FILE *f = fopen(index_of(dir), "ab");
    CHECK(f && ftruncate(fileno(f), (off_t)ANDREA_CONFIG_JSON_MAX + 1) == 0);
    if (f) fclose(f);
    expect_refusal(dir, index_of(dir), "too large for a shard index", NULL);
}

static void test_a_bad_shard_is_refused_as_one_file_would_be(void) {
    const char *dir = make_sharded("bad-shard");
    size_t len;
    unsigned char *buf = fx_read(shard_path(dir, 2, 2), &len);
    fx_write(shard_path(dir, 2, 2), buf, len - 4); /* one value short */
    free(buf);
    expect_refusal(dir, shard_path(dir, 2, 2), "lie outside the data section", NULL);
    dir = make_sharded("nan-shard");
    fx_poke_f32(shard_path(dir, 2, 2), "transformer.ln_f.weight", 3, NAN);
    expect_refusal(dir, shard_path(dir, 2, 2), "tensor transformer.ln_f.weight holds a non-finite value",
                   "NaN at element 3");
}

static void test_a_folder_without_weights_names_both_files(void) {
    const char *dir = make_sharded("no-weights");
    unlink(index_of(dir));
    expect_refusal(dir, dir, "folder holds no model.safetensors and no model.safetensors.index.json", NULL);
}

int main(void) {
    RUN(test_sharded_loads_the_same_model_as_one_file);
    RUN(test_the_index_path_loads_like_its_folder);
    RUN(test_identity_is_the_sha256_of_the_files_sha256_lines);
    RUN(test_a_folder_with_model_safetensors_ignores_a_stale_index);
    RUN(test_shard_names_outside_the_folder_are_refused);
    RUN(test_a_missing_shard_is_refused_naming_it);
    RUN(test_a_fifo_in_place_of_a_shard_or_the_index_is_refused);
    RUN(test_two_names_of_one_shard_file_are_refused);
    RUN(test_a_tensor_the_index_maps_to_a_shard_that_lacks_it_is_refused);
    RUN(test_a_tensor_mapped_to_another_shard_is_refused);
    RUN(test_a_tensor_in_two_shards_is_refused);
    RUN(test_a_shard_holding_a_tensor_the_index_does_not_list_is_refused);
    RUN(test_a_wrong_total_size_is_refused_and_none_is_fine);
    RUN(test_an_index_that_is_not_an_index_is_refused);
    RUN(test_a_bad_shard_is_refused_as_one_file_would_be);
    RUN(test_a_folder_without_weights_names_both_files);
    return check_summary("test_checkpoint_sharded");
}
