/* test_checkpoint_safetensors_errors — every way a GPT-2 safetensors checkpoint (or its
 * config.json) can be wrong is refused with one line naming the file and, where one is at fault,
 * the tensor. Each test writes a good folder and spoils it in exactly one way. */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "../engine/checkpoint.h"
#include "check.h"
#include "checkpoint_fixtures.h"

/* A fresh good folder DIR (model.safetensors with the `transformer.` prefix, F32, + config.json). */
static const char *good_dir(const char *name) {
    static char dirs[4][512];
    static int k;
    char *dir = dirs[k++ % 4];
    snprintf(dir, 512, "%s/%s", check_tmpdir(), name);
    andrea_config cfg = fx_tiny_config();
    andrea_model m;
    ae_error err = {{0}};
    if (andrea_model_init_random(&m, &cfg, 11, &err) || andrea_model_save_safetensors(&m, dir, "F32", 1, &err))
        fx_die(err.msg, dir);
    andrea_model_free(&m);
    return dir;
}

static void expect_refusal(const char *path, const char *file, const char *want, const char *want2) {
    andrea_model m;
    ae_error err = {{0}};
    int rc = andrea_model_load(&m, path, &err);
    CHECK(rc == -1);
    CHECK_MSG(strncmp(err.msg, file, strlen(file)) == 0, "message does not start with %s: %s", file, err.msg);
    CHECK_MSG(fx_contains(err.msg, want), "want \"%s\" in: %s", want, err.msg);
    if (want2) CHECK_MSG(fx_contains(err.msg, want2), "want \"%s\" in: %s", want2, err.msg);
    CHECK(strchr(err.msg, '\n') == NULL);
    CHECK(m.memory == NULL);
}

/* Loading DIR must fail with a message about its model.safetensors. */
static void expect_st_refusal(const char *dir, const char *want, const char *want2) {
    expect_refusal(dir, fx_path(dir, "model.safetensors"), want, want2);
}

/* ---- the container ---- */

static void test_header_that_is_not_json_is_refused(void) {
    const char *dir = good_dir("not-json");
    const char *file = fx_path(dir, "model.safetensors");
    size_t len;
    unsigned char *buf = fx_read(file, &len);
    memcpy(buf + 8, "{nope", 5);
    fx_write(file, buf, len);
    expect_st_refusal(dir, "header is not a valid JSON object", NULL);
    free(buf);
}

static void test_header_that_is_a_json_array_is_refused(void) {
    const char *dir = good_dir("json-array");
    const char *file = fx_path(dir, "model.safetensors");
    uint64_t n = 2;
    unsigned char buf[10];
    memcpy(buf, &n, 8);
    memcpy(buf + 8, "[]", 2);
    fx_write(file, buf, sizeof buf);
    expect_st_refusal(dir, "header is not a valid JSON object", NULL);
}

static void test_header_length_larger_than_file_is_refused(void) {
    const char *dir = good_dir("hdr-len");
    const char *file = fx_path(dir, "model.safetensors");
    size_t len;
    unsigned char *buf = fx_read(file, &len);
    uint64_t n = (uint64_t)len;
    memcpy(buf, &n, 8);
    fx_write(file, buf, len);
    char want[80];
    snprintf(want, sizeof want, "header length %zu is larger than the file (%zu bytes)", len, len);
    expect_st_refusal(dir, want, NULL);
    free(buf);
}

/* A 200 MB sparse file (no disk, no time) whose header claims 150 MB: refused before reading. */
static void test_absurd_header_length_is_refused_before_reading_it(void) {
    const char *dir = good_dir("hdr-absurd");
    const char *file = fx_path(dir, "model.safetensors");
    int fd = open(file, O_WRONLY | O_TRUNC);
    uint64_t n = 150000000;
    CHECK(fd >= 0 && write(fd, &n, 8) == 8 && ftruncate(fd, 200000000) == 0 && close(fd) == 0);
    expect_st_refusal(dir, "header length 150000000 exceeds", NULL);
}

static void test_file_shorter_than_length_field_is_refused(void) {
    const char *dir = good_dir("tiny-file");
    fx_write(fx_path(dir, "model.safetensors"), "abc", 3);
    expect_st_refusal(dir, "truncated: 3 bytes", NULL);
}

static void test_truncated_data_section_is_refused_naming_a_tensor(void) {
    const char *dir = good_dir("trunc-data");
    const char *file = fx_path(dir, "model.safetensors");
    size_t len;
    unsigned char *buf = fx_read(file, &len);
    fx_write(file, buf, len - 4); /* ln_f.bias, the last tensor, loses its last value */
    expect_st_refusal(dir, "tensor transformer.ln_f.bias", "outside the data section");
    free(buf);
}

/* ---- tensors ---- */

typedef struct {
    const char *name;
    void (*fn)(cJSON *entry, void *arg);
    void *arg;
} entry_edit;

static void edit_entry(cJSON *hdr, void *arg) {
    entry_edit *e = arg;
    cJSON *item = cJSON_GetObjectItem(hdr, e->name);
    if (!item) fx_die("fixture lacks tensor", e->name);
    e->fn(item, e->arg);
}

static void spoil(const char *dir, const char *tensor, void (*fn)(cJSON *, void *), void *arg) {
    entry_edit e = {tensor, fn, arg};
    fx_edit_safetensors(fx_path(dir, "model.safetensors"), edit_entry, &e, NULL, 0);
}

static void delete_tensor(cJSON *hdr, void *arg) { cJSON_DeleteItemFromObject(hdr, (const char *)arg); }

/* A causal-mask buffer is ignored only for a layer the model has; __metadata__ is the format's
 * map of strings to strings. */
static void add_mask_of_layer_9(cJSON *hdr, void *arg) {
    (void)arg;
    cJSON *e = cJSON_CreateObject(), *shape = cJSON_CreateArray(), *offs = cJSON_CreateArray();
    cJSON_AddStringToObject(e, "dtype", "F32");
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(0));
    cJSON_AddItemToObject(e, "shape", shape);
    cJSON_AddItemToArray(offs, cJSON_CreateNumber(0));
    cJSON_AddItemToArray(offs, cJSON_CreateNumber(0));
    cJSON_AddItemToObject(e, "data_offsets", offs);
    cJSON_AddItemToObject(hdr, "transformer.h.9.attn.bias", e);
}

static void set_metadata_array(cJSON *hdr, void *arg) {
    (void)arg;
    cJSON_DeleteItemFromObject(hdr, "__metadata__");
    cJSON *m = cJSON_CreateArray();
    cJSON_AddItemToArray(m, cJSON_CreateNumber(1));
    cJSON_AddItemToObject(hdr, "__metadata__", m);
}

static void test_mask_buffers_beyond_the_layers_and_a_metadata_array_are_refused(void) {
    const char *dir = good_dir("mask9");
    fx_edit_safetensors(fx_path(dir, "model.safetensors"), add_mask_of_layer_9, NULL, NULL, 0);
    expect_st_refusal(dir, "tensor transformer.h.9.attn.bias: not a GPT-2 parameter", NULL);
    dir = good_dir("meta");
    fx_edit_safetensors(fx_path(dir, "model.safetensors"), set_metadata_array, NULL, NULL, 0);
    expect_st_refusal(dir, "__metadata__ is not a map of strings to strings", NULL);
}

static void test_missing_tensor_is_refused_naming_it(void) {
    const char *dir = good_dir("missing");
    fx_edit_safetensors(fx_path(dir, "model.safetensors"), delete_tensor, "transformer.h.1.mlp.c_fc.bias", NULL, 0);
    expect_st_refusal(dir, "tensor h.1.mlp.c_fc.bias: missing", NULL);
}

static void set_shape(cJSON *entry, void *arg) {
    const int *s = arg;
    cJSON_ReplaceItemInObject(entry, "shape", cJSON_CreateIntArray(s + 1, s[0]));
}

/* [24, 8] instead of [8, 24]: the same bytes, so only the shape check can catch it (a loader that
 * trusted the byte count would load a scrambled W_QKV). */
static void test_misshaped_tensor_is_refused_naming_it(void) {
    const char *dir = good_dir("misshaped");
    int shape[] = {2, 24, 8};
    spoil(dir, "transformer.h.0.attn.c_attn.weight", set_shape, shape);
    expect_st_refusal(dir, "tensor transformer.h.0.attn.c_attn.weight: shape [24, 8]", "implies [8, 24]");
}

static void test_shape_that_disagrees_with_byte_span_is_refused(void) {
    const char *dir = good_dir("span");
    int shape[] = {1, 9};
    spoil(dir, "transformer.ln_f.weight", set_shape, shape);
    expect_st_refusal(dir, "tensor transformer.ln_f.weight: data_offsets span 32 bytes", "need 36");
}

static void set_offsets(cJSON *entry, void *arg) {
    const double *o = arg;
    cJSON_ReplaceItemInObject(entry, "data_offsets", cJSON_CreateDoubleArray(o, 2));
}

static void test_offsets_outside_file_are_refused(void) {
    const char *dir = good_dir("outside");
    size_t data = fx_safetensors_data_len(fx_path(dir, "model.safetensors"));
    double o[2] = {(double)data, (double)data + 32}; /* ln_f.weight: 8 floats past the end */
    spoil(dir, "transformer.ln_f.weight", set_offsets, o);
    expect_st_refusal(dir, "tensor transformer.ln_f.weight: data_offsets", "outside the data section");
}

static void test_offsets_with_end_before_begin_are_refused(void) {
    const char *dir = good_dir("reversed");
    double o[2] = {64, 32};
    spoil(dir, "transformer.ln_f.weight", set_offsets, o);
    expect_st_refusal(dir, "tensor transformer.ln_f.weight: data_offsets is not [begin, end]", NULL);
}

static void test_overlapping_offsets_are_refused(void) {
    const char *dir = good_dir("overlap");
    /* wte occupies [0, 416): put ln_f.weight on its bytes 16..48 */
    double o[2] = {16, 48};
    spoil(dir, "transformer.ln_f.weight", set_offsets, o);
    expect_st_refusal(dir, "overlap", "transformer.wte.weight");
}

/* Rewrites number `index` of tensor NAME's FIELD array in the header text: fmt (one "%s", the
 * digits as written) gives its new text. Done on the text, since cJSON prints 8.0 back as 8. */
static void rewrite_number(const char *dir, const char *name, const char *field, int index, const char *fmt) {
    const char *file = fx_path(dir, "model.safetensors");
    fx_edit_safetensors(file, NULL, NULL, NULL, 0); /* the header as cJSON prints it, unpadded */
    size_t len;
    unsigned char *buf = fx_read(file, &len);
    uint64_t n;
    memcpy(&n, buf, 8);
    char *hdr = (char *)buf + 8, key[160], *p;
    snprintf(key, sizeof key, "\"%s\":{", name);
    char *at = strstr(hdr, key);
    snprintf(key, sizeof key, "\"%s\":[", field);
    if (!at || !(p = strstr(at, key))) fx_die("fixture header lacks the field", name);
    p += strlen(key);
    for (int i = 0; i < index; i++) p = strchr(p, ',') + 1;
    size_t digits = strspn(p, "0123456789");
    char old[32], lit[64];
    snprintf(old, sizeof old, "%.*s", (int)digits, p);
    snprintf(lit, sizeof lit, fmt, old);
    size_t head = (size_t)(p - hdr), tail_at = 8 + head + digits, nl = strlen(lit);
    uint64_t nn = n - digits + nl;
    FILE *f = fopen(file, "wb");
    if (!f || fwrite(&nn, 8, 1, f) != 1 || fwrite(hdr, 1, head, f) != head || fwrite(lit, 1, nl, f) != nl ||
        fwrite(buf + tail_at, 1, len - tail_at, f) != len - tail_at || fclose(f))
        fx_die("cannot rewrite", file);
    free(buf);
}

/* serde reads shapes and offsets as usize, which refuses a number written with a '.', an
 * exponent or a sign though its value is whole; cJSON alone would read 8.0 as 8. */
static void test_sizes_written_as_floats_are_refused(void) {
    static const struct { const char *field, *fmt; int index; } cases[] = {
        {"shape", "%s.0", 0}, {"shape", "%se0", 0}, {"data_offsets", "%s.0", 1}, {"data_offsets", "%sE+0", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char name[32];
        snprintf(name, sizeof name, "float-size-%zu", i);
        const char *dir = good_dir(name);
        rewrite_number(dir, "transformer.ln_f.weight", cases[i].field, cases[i].index, cases[i].fmt);
        expect_st_refusal(dir, "tensor transformer.ln_f.weight:",
                          !strcmp(cases[i].field, "shape") ? "shape holds a size that is not a non-negative integer"
                                                           : "data_offsets holds an offset that is not a non-negative");
    }
    const char *dir = good_dir("minus-zero"); /* wte is first: [0, 416] */
    rewrite_number(dir, "transformer.wte.weight", "data_offsets", 0, "-%s");
    expect_st_refusal(dir, "tensor transformer.wte.weight: data_offsets holds an offset", "written in digits");
    /* digits, but 2^53 + 1 (read as the double 2^53) or 2^64: "too large", not "not written in
     * digits" (which sent a reader looking for a '.' or a sign that is not there) */
    dir = good_dir("huge-size");
    rewrite_number(dir, "transformer.ln_f.weight", "shape", 0, "9007199254740993%.0s");
    expect_st_refusal(dir, "tensor transformer.ln_f.weight: shape holds a size too large", "at most 2^53 - 1");
    dir = good_dir("huge-offset");
    rewrite_number(dir, "transformer.ln_f.weight", "data_offsets", 1, "18446744073709551616%.0s");
    expect_st_refusal(dir, "tensor transformer.ln_f.weight: data_offsets holds an offset too large", "at most 2^53 - 1");
    dir = good_dir("digits"); /* the same rewrite keeping the digits loads */
    rewrite_number(dir, "transformer.ln_f.weight", "shape", 0, "%s");
    andrea_model m;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&m, dir, &err) == 0, "%s", err.msg);
    andrea_model_free(&m);
}

/* An ignored causal-mask buffer of zero bytes at offsets [at, at]. */
static void add_empty_mask(cJSON *hdr, void *arg) {
    const double *at = arg;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "dtype", "F32");
    const int zero = 0;
    cJSON_AddItemToObject(e, "shape", cJSON_CreateIntArray(&zero, 1));
    const double o[2] = {*at, *at};
    cJSON_AddItemToObject(e, "data_offsets", cJSON_CreateDoubleArray(o, 2));
    cJSON_AddItemToObject(hdr, "transformer.h.0.attn.bias", e);
}

/* The safetensors library walks the tensors sorted by offsets and wants each to begin where the
 * one before it ends, an empty one too: [16, 16] lies inside wte [0, 416), off that chain. At 0,
 * at 416 (where wte ends and the next tensor begins) and at the end of the data it is on it. */
static void test_empty_tensor_off_the_offset_chain_is_refused(void) {
    const char *dir = good_dir("empty-off");
    double at = 16;
    fx_edit_safetensors(fx_path(dir, "model.safetensors"), add_empty_mask, &at, NULL, 0);
    expect_st_refusal(dir, "tensor transformer.h.0.attn.bias: empty, but its data_offsets [16, 16] are not where",
                      "(byte 416 of the data section)");
    const double on_chain[3] = {0, 416, -1};
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "empty-on-%d", i);
        dir = good_dir(name);
        const char *file = fx_path(dir, "model.safetensors");
        at = on_chain[i] < 0 ? (double)fx_safetensors_data_len(file) : on_chain[i];
        fx_edit_safetensors(file, add_empty_mask, &at, NULL, 0);
        andrea_model m;
        ae_error err = {{0}};
        CHECK_MSG(andrea_model_load(&m, dir, &err) == 0, "empty tensor at %.0f refused: %s", at, err.msg);
        andrea_model_free(&m);
    }
}

static void set_dtype(cJSON *entry, void *arg) {
    cJSON_ReplaceItemInObject(entry, "dtype", cJSON_CreateString((const char *)arg));
}

static void test_unsupported_dtype_is_refused_naming_the_tensor(void) {
    const char *dir = good_dir("dtype");
    spoil(dir, "transformer.h.1.ln_2.bias", set_dtype, "I32");
    expect_st_refusal(dir, "tensor transformer.h.1.ln_2.bias: dtype I32 not supported", NULL);
}

static void add_copy_of(cJSON *hdr, void *arg) {
    const char *const *names = arg; /* {existing, new, begin-as-text} */
    cJSON *e = cJSON_Duplicate(cJSON_GetObjectItem(hdr, names[0]), 1);
    double begin = atof(names[2]);
    cJSON *offs = cJSON_GetObjectItem(e, "data_offsets");
    double span = cJSON_GetArrayItem(offs, 1)->valuedouble - cJSON_GetArrayItem(offs, 0)->valuedouble;
    double o[2] = {begin, begin + span};
    cJSON_ReplaceItemInObject(e, "data_offsets", cJSON_CreateDoubleArray(o, 2));
    cJSON_AddItemToObject(hdr, names[1], e);
}

/* Adds tensor `added` (a copy of ln_f.weight's entry, 8 floats appended to the file). */
static void add_tensor(const char *dir, const char *added) {
    const char *file = fx_path(dir, "model.safetensors");
    char begin[32];
    snprintf(begin, sizeof begin, "%zu", fx_safetensors_data_len(file));
    const char *names[3] = {"transformer.ln_f.weight", added, begin};
    float extra[8] = {0};
    fx_edit_safetensors(file, add_copy_of, names, extra, sizeof extra);
}

static void test_unexpected_tensor_is_refused_naming_it(void) {
    const char *dir = good_dir("unexpected");
    add_tensor(dir, "transformer.h.0.attn.rotary.weight");
    expect_st_refusal(dir, "tensor transformer.h.0.attn.rotary.weight", "unexpected tensor");
}

/* A name with a newline must not split the one-line message (expect_refusal checks for '\n'). */
static void test_tensor_name_with_control_characters_is_shown_safely(void) {
    const char *dir = good_dir("evil-name");
    add_tensor(dir, "evil\nname\x1b[31m");
    expect_st_refusal(dir, "tensor evil?name?[31m", "unexpected tensor");
}

static void test_tensor_of_a_layer_beyond_n_layer_is_refused(void) {
    const char *dir = good_dir("extra-layer");
    add_tensor(dir, "transformer.h.2.ln_1.weight");
    expect_st_refusal(dir, "tensor transformer.h.2.ln_1.weight", "2-layer model");
}

static void test_tensor_present_with_and_without_prefix_is_refused(void) {
    const char *dir = good_dir("duplicate");
    add_tensor(dir, "ln_f.weight");
    expect_st_refusal(dir, "appears twice", "ln_f.weight");
}

static void poison_tensor(const char *dir, const char *tensor, size_t index, float v) {
    fx_poke_f32(fx_path(dir, "model.safetensors"), tensor, index, v);
}

static void test_nan_weight_is_refused_naming_the_tensor(void) {
    const char *dir = good_dir("nan");
    poison_tensor(dir, "transformer.h.1.attn.c_proj.weight", 7, NAN);
    expect_st_refusal(dir, "tensor transformer.h.1.attn.c_proj.weight", "NaN");
}

static void test_inf_weight_is_refused_naming_the_tensor(void) {
    const char *dir = good_dir("inf");
    poison_tensor(dir, "transformer.wpe.weight", 0, -INFINITY);
    expect_st_refusal(dir, "tensor transformer.wpe.weight", "Inf");
}

/* ---- config.json ---- */

static void test_missing_config_json_is_refused(void) {
    const char *dir = good_dir("no-config");
    const char *cfg = fx_path(dir, "config.json");
    CHECK(unlink(cfg) == 0);
    expect_refusal(dir, cfg, "cannot open", NULL);
}

static void test_invalid_config_json_is_refused(void) {
    const char *dir = good_dir("bad-config");
    const char *cfg = fx_path(dir, "config.json");
    fx_write_text(cfg, "{\"n_embd\": 8,");
    expect_refusal(dir, cfg, "not a JSON object", NULL);
}

/* Rewrites config.json with one key set to item (NULL: key removed). */
static void config_with_item(const char *dir, const char *key, cJSON *item) {
    const char *cfg = fx_path(dir, "config.json");
    size_t len;
    unsigned char *text = fx_read(cfg, &len);
    cJSON *o = cJSON_ParseWithLength((const char *)text, len);
    cJSON_DeleteItemFromObject(o, key);
    if (item) cJSON_AddItemToObject(o, key, item);
    char *out = cJSON_Print(o);
    fx_write_text(cfg, out);
    cJSON_free(out);
    cJSON_Delete(o);
    free(text);
}

/* config.json with one key set to a JSON value (NULL value: key removed). */
static void config_with(const char *dir, const char *key, const char *json_value) {
    config_with_item(dir, key, json_value ? cJSON_Parse(json_value) : NULL);
}

/* config_with, the value written as given (cJSON would print 8.0 as 8). */
static void config_with_raw(const char *dir, const char *key, const char *raw_value) {
    config_with_item(dir, key, cJSON_CreateRaw(raw_value));
}

static void config_case(const char *name, const char *key, const char *value, const char *want) {
    const char *dir = good_dir(name);
    config_with(dir, key, value);
    expect_refusal(dir, fx_path(dir, "config.json"), want, NULL);
}

static void test_config_without_n_embd_is_refused(void) { config_case("cfg-no-embd", "n_embd", NULL, "missing \"n_embd\""); }
static void test_config_with_fractional_n_head_is_refused(void) {
    config_case("cfg-frac", "n_head", "2.5", "\"n_head\" = 2.5 is not a positive integer");
}
static void test_config_with_string_size_is_refused(void) {
    config_case("cfg-str", "n_layer", "\"2\"", "\"n_layer\" is not a number");
}
static void test_config_with_other_layer_norm_epsilon_is_refused(void) {
    config_case("cfg-eps", "layer_norm_epsilon", "1e-6", "layer_norm_epsilon must be 1e-5");
}
static void test_config_with_other_activation_is_refused(void) {
    config_case("cfg-act", "activation_function", "\"relu\"", "activation_function \"relu\" is not supported");
}
static void test_config_with_untied_embeddings_is_refused(void) {
    config_case("cfg-tie", "tie_word_embeddings", "false", "tie_word_embeddings");
}
static void test_config_with_d_model_not_divisible_by_n_head_is_refused(void) {
    config_case("cfg-div", "n_head", "3", "d_model 8 is not divisible by n_head 3");
}

/* n_positions 1000 with an n_positions-10 wpe: the tensor is named as the one that disagrees */
static void test_config_sizes_that_disagree_with_tensors_are_refused(void) {
    const char *dir = good_dir("cfg-disagree");
    config_with(dir, "n_positions", "1000");
    expect_st_refusal(dir, "tensor transformer.wpe.weight: shape [10, 8]", "implies [1000, 8]");
}

/* A size written as a float (8.0) is no integer to Hugging Face's nn.Linear: refused. */
static void test_config_size_written_as_a_float_is_refused(void) {
    const char *dir = good_dir("cfg-float");
    config_with_raw(dir, "n_embd", "8.0");
    expect_refusal(dir, fx_path(dir, "config.json"), "\"n_embd\" = 8 is not a positive integer written as digits", NULL);
}

/* Hugging Face's names for the sizes (hidden_size, num_attention_heads, ...) win there: one that
 * contradicts andrea's name is refused, one alone is read. */
static void test_config_hf_alias_that_disagrees_is_refused(void) {
    const char *dir = good_dir("cfg-alias-bad");
    config_with(dir, "num_attention_heads", "4");
    expect_refusal(dir, fx_path(dir, "config.json"), "\"n_head\" and \"num_attention_heads\"", "disagree");
}

static void test_config_hf_alias_alone_is_read(void) {
    const char *dir = good_dir("cfg-alias-ok");
    config_with(dir, "n_layer", NULL);
    config_with(dir, "num_hidden_layers", "2");
    config_with(dir, "hidden_size", "8"); /* the same as n_embd: no contradiction */
    andrea_model m;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&m, dir, &err) == 0, "%s", err.msg);
    CHECK(m.cfg.n_layer == 2 && m.cfg.d_model == 8);
    andrea_model_free(&m);
}

/* Old configs name the context n_ctx only. */
static void test_config_with_n_ctx_only_is_accepted(void) {
    const char *dir = good_dir("cfg-nctx");
    config_with(dir, "n_positions", NULL);
    andrea_model m;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&m, dir, &err) == 0, "%s", err.msg);
    CHECK(m.cfg.max_seq_len == 10);
    andrea_model_free(&m);
}

static void test_folder_without_model_safetensors_is_refused(void) {
    const char *dir = fx_path(check_tmpdir(), "empty-folder");
    mkdir(dir, 0777);
    expect_refusal(dir, dir, "no model.safetensors", NULL);
}

int main(void) {
    RUN(test_header_that_is_not_json_is_refused);
    RUN(test_header_that_is_a_json_array_is_refused);
    RUN(test_header_length_larger_than_file_is_refused);
    RUN(test_absurd_header_length_is_refused_before_reading_it);
    RUN(test_file_shorter_than_length_field_is_refused);
    RUN(test_truncated_data_section_is_refused_naming_a_tensor);
    RUN(test_missing_tensor_is_refused_naming_it);
    RUN(test_misshaped_tensor_is_refused_naming_it);
    RUN(test_shape_that_disagrees_with_byte_span_is_refused);
    RUN(test_offsets_outside_file_are_refused);
    RUN(test_offsets_with_end_before_begin_are_refused);
    RUN(test_overlapping_offsets_are_refused);
    RUN(test_sizes_written_as_floats_are_refused);
    RUN(test_empty_tensor_off_the_offset_chain_is_refused);
    RUN(test_unsupported_dtype_is_refused_naming_the_tensor);
    RUN(test_unexpected_tensor_is_refused_naming_it);
    RUN(test_tensor_name_with_control_characters_is_shown_safely);
    RUN(test_tensor_of_a_layer_beyond_n_layer_is_refused);
    RUN(test_tensor_present_with_and_without_prefix_is_refused);
    RUN(test_nan_weight_is_refused_naming_the_tensor);
    RUN(test_inf_weight_is_refused_naming_the_tensor);
    RUN(test_missing_config_json_is_refused);
    RUN(test_invalid_config_json_is_refused);
    RUN(test_config_without_n_embd_is_refused);
    RUN(test_config_with_fractional_n_head_is_refused);
    RUN(test_config_with_string_size_is_refused);
    RUN(test_config_with_other_layer_norm_epsilon_is_refused);
    RUN(test_config_with_other_activation_is_refused);
    RUN(test_config_with_untied_embeddings_is_refused);
    RUN(test_config_with_d_model_not_divisible_by_n_head_is_refused);
    RUN(test_config_size_written_as_a_float_is_refused);
    RUN(test_config_hf_alias_that_disagrees_is_refused);
    RUN(test_config_hf_alias_alone_is_read);
    RUN(test_config_sizes_that_disagree_with_tensors_are_refused);
    RUN(test_config_with_n_ctx_only_is_accepted);
    RUN(test_folder_without_model_safetensors_is_refused);
    RUN(test_mask_buffers_beyond_the_layers_and_a_metadata_array_are_refused);
    return check_summary("test_checkpoint_safetensors_errors");
}
