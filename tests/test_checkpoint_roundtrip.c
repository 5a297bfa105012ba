/* test_checkpoint_roundtrip — a random model written in every format andrea reads comes back
 * with the same config and the same values: exactly for fp32, and equal to the writer's
 * round-to-nearest-even for bf16/fp16 (the only loss those formats allow). */
#include <math.h>

#include "../engine/checkpoint.h"
#include "check.h"
#include "checkpoint_fixtures.h"
#include "../common/half.h"

static int same_config(const andrea_config *a, const andrea_config *b) {
    return a->max_seq_len == b->max_seq_len && a->vocab_size == b->vocab_size &&
           a->padded_vocab_size == b->padded_vocab_size && a->n_layer == b->n_layer &&
           a->n_head == b->n_head && a->d_model == b->d_model && a->head_dim == b->head_dim;
}

typedef float (*rounding_fn)(float);
static float keep(float x) { return x; }
static float via_bf16(float x) { return andrea_bf16_to_f32(andrea_f32_to_bf16(x)); }
static float via_f16(float x) { return andrea_f16_to_f32(andrea_f32_to_f16(x)); }

/* Every real parameter of `got` equals round(want); wte compared over the real vocab rows only
 * (safetensors has no padding rows). Returns the number of mismatches. */
static size_t mismatches(const andrea_model *want, const andrea_model *got, rounding_fn round) {
    size_t sizes_w[ANDREA_N_PARAM_TENSORS], sizes_g[ANDREA_N_PARAM_TENSORS], tw, tg, bad = 0;
    andrea_param_sizes(&want->cfg, sizes_w, &tw, NULL);
    andrea_param_sizes(&got->cfg, sizes_g, &tg, NULL);
    const float *pw = want->memory, *pg = got->memory;
    for (int i = 0; i < ANDREA_N_PARAM_TENSORS; i++) {
        size_t n = i == 0 ? (size_t)want->cfg.vocab_size * (size_t)want->cfg.d_model : sizes_w[i];
        for (size_t j = 0; j < n; j++)
            if (pg[j] != round(pw[j])) bad++;
        pw += sizes_w[i];
        pg += sizes_g[i];
    }
    return bad;
}

static void test_bin_v3_round_trip_is_exact(void) {
    andrea_config cfg = fx_tiny_config();
    const char *path = fx_path(check_tmpdir(), "v3.bin");
    andrea_model want = fx_make_bin(path, &cfg, 3), got;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&got, path, &err) == 0, "%s", err.msg);
    CHECK(same_config(&want.cfg, &got.cfg));
    CHECK(got.n_floats == want.n_floats);
    CHECK(memcmp(got.memory, want.memory, want.n_floats * sizeof(float)) == 0);
    CHECK(got.format == ANDREA_FMT_BIN);
    CHECK(strcmp(got.stored_dtype, "fp32") == 0);
    CHECK(strcmp(got.path, path) == 0);
    CHECK(strcmp(got.dir, check_tmpdir()) == 0);
    andrea_model_free(&got);
    andrea_model_free(&want);
}

static void test_bin_v5_round_trip_equals_bf16_rounding(void) {
    andrea_config cfg = fx_tiny_config();
    const char *path = fx_path(check_tmpdir(), "v5.bin");
    andrea_model want = fx_make_bin(path, &cfg, 5), got;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&got, path, &err) == 0, "%s", err.msg);
    CHECK(same_config(&want.cfg, &got.cfg));
    CHECK(mismatches(&want, &got, via_bf16) == 0);
    CHECK(strcmp(got.stored_dtype, "bf16") == 0);
    /* bf16 keeps 8 significant bits (7 stored): rounding moves a value by at most half an ulp,
     * which is at most 2^-8 of the value */
    double worst = 0;
    for (size_t i = 0; i < want.n_floats; i++)
        if (want.memory[i] != 0)
            worst = fmax(worst, fabs(got.memory[i] - want.memory[i]) / fabs(want.memory[i]));
    CHECK_MSG(worst <= 1.0 / 256, "worst relative error %g", worst);
    andrea_model_free(&got);
    andrea_model_free(&want);
}

static void safetensors_case(const char *dtype, int with_prefix, rounding_fn round, const char *want_dtype) {
    andrea_config cfg = fx_tiny_config();
    andrea_model want, got;
    ae_error err = {{0}};
    char name[64];
    snprintf(name, sizeof name, "st-%s-%d", dtype, with_prefix);
    const char *dir = fx_path(check_tmpdir(), name);
    CHECK(andrea_model_init_random(&want, &cfg, 7, &err) == 0);
    CHECK_MSG(andrea_model_save_safetensors(&want, dir, dtype, with_prefix, &err) == 0, "%s", err.msg);
    /* loaded through the folder */
    CHECK_MSG(andrea_model_load(&got, dir, &err) == 0, "%s %s", dtype, err.msg);
    CHECK(got.cfg.padded_vocab_size == cfg.vocab_size); /* HF files carry no padding */
    CHECK(got.cfg.vocab_size == cfg.vocab_size && got.cfg.n_layer == cfg.n_layer &&
          got.cfg.d_model == cfg.d_model && got.cfg.n_head == cfg.n_head &&
          got.cfg.max_seq_len == cfg.max_seq_len && got.cfg.head_dim == cfg.head_dim);
    CHECK_MSG(mismatches(&want, &got, round) == 0, "%s prefix=%d", dtype, with_prefix);
    CHECK(got.format == ANDREA_FMT_SAFETENSORS);
    CHECK(strcmp(got.stored_dtype, want_dtype) == 0);
    CHECK(strcmp(got.dir, dir) == 0);
    andrea_model_free(&got);
    /* and through the .safetensors path, config.json beside it */
    const char *file = fx_path(dir, "model.safetensors");
    CHECK_MSG(andrea_model_load(&got, file, &err) == 0, "%s", err.msg);
    CHECK(mismatches(&want, &got, round) == 0);
    CHECK(strcmp(got.dir, dir) == 0);
    andrea_model_free(&got);
    andrea_model_free(&want);
}

static void test_safetensors_f32_round_trip_is_exact_with_prefix(void) { safetensors_case("F32", 1, keep, "fp32"); }
static void test_safetensors_f32_round_trip_is_exact_without_prefix(void) { safetensors_case("F32", 0, keep, "fp32"); }
static void test_safetensors_f16_round_trip_equals_f16_rounding(void) { safetensors_case("F16", 1, via_f16, "fp16"); }
static void test_safetensors_bf16_round_trip_equals_bf16_rounding(void) { safetensors_case("BF16", 0, via_bf16, "bf16"); }

/* The Conv1D [in, out] -> Linear [out, in] transpose, checked on one known element rather than
 * only through our own writer (which could share a mistake with the reader): element [i][o] of
 * the file's c_attn.weight must land at qkvw[o][i]. */
static void test_safetensors_conv1d_weight_is_transposed_to_linear_layout(void) {
    andrea_config cfg = fx_tiny_config();
    andrea_model want, got;
    ae_error err = {{0}};
    const char *dir = fx_path(check_tmpdir(), "st-transpose");
    CHECK(andrea_model_init_random(&want, &cfg, 3, &err) == 0);
    CHECK(andrea_model_save_safetensors(&want, dir, "F32", 0, &err) == 0);
    const size_t C = 8, i = 2, o = 13; /* input row 2, output column 13 (a K column) */
    fx_poke_f32(fx_path(dir, "model.safetensors"), "h.1.attn.c_attn.weight", i * 3 * C + o, 123.25f);
    CHECK_MSG(andrea_model_load(&got, dir, &err) == 0, "%s", err.msg);
    CHECK(got.p.qkvw[1 * 3 * C * C + o * C + i] == 123.25f);
    andrea_model_free(&got);
    andrea_model_free(&want);
}

static void add_mask_buffers(cJSON *hdr, void *arg) {
    size_t begin = *(size_t *)arg;
    for (int l = 0; l < 2; l++) {
        char name[64];
        snprintf(name, sizeof name, "h.%d.attn.%s", l, l ? "masked_bias" : "bias");
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "dtype", "F32");
        cJSON *shape = cJSON_AddArrayToObject(e, "shape");
        cJSON_AddItemToArray(shape, cJSON_CreateNumber(l ? 0 : 1)); /* masked_bias: empty */
        cJSON *offs = cJSON_AddArrayToObject(e, "data_offsets");
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)begin));
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(begin + (l ? 0 : 4))));
        cJSON_AddItemToObject(hdr, name, e);
    }
}

static void test_safetensors_causal_mask_buffers_are_ignored(void) {
    andrea_config cfg = fx_tiny_config();
    andrea_model want, got;
    ae_error err = {{0}};
    const char *dir = fx_path(check_tmpdir(), "st-masks");
    CHECK(andrea_model_init_random(&want, &cfg, 5, &err) == 0);
    CHECK(andrea_model_save_safetensors(&want, dir, "F32", 0, &err) == 0);
    const char *file = fx_path(dir, "model.safetensors");
    size_t begin = fx_safetensors_data_len(file);
    float one = 1.0f;
    fx_edit_safetensors(file, add_mask_buffers, &begin, &one, 4);
    CHECK_MSG(andrea_model_load(&got, dir, &err) == 0, "%s", err.msg);
    CHECK(mismatches(&want, &got, keep) == 0);
    andrea_model_free(&got);
    andrea_model_free(&want);
}

/* lm_head.weight appended as a copy of wte (tied) or with one value changed (untied). */
static void add_lm_head(cJSON *hdr, void *arg) {
    size_t begin = *(size_t *)arg;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "dtype", "F32");
    cJSON *shape = cJSON_AddArrayToObject(e, "shape");
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(13));
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(8));
    cJSON *offs = cJSON_AddArrayToObject(e, "data_offsets");
    cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)begin));
    cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(begin + 13 * 8 * 4)));
    cJSON_AddItemToObject(hdr, "lm_head.weight", e);
}

static void lm_head_case(const char *name, int untie, int expect_ok) {
    andrea_config cfg = fx_tiny_config();
    andrea_model want, got;
    ae_error err = {{0}};
    const char *dir = fx_path(check_tmpdir(), name);
    CHECK(andrea_model_init_random(&want, &cfg, 9, &err) == 0);
    CHECK(andrea_model_save_safetensors(&want, dir, "F32", 1, &err) == 0);
    const char *file = fx_path(dir, "model.safetensors");
    size_t begin = fx_safetensors_data_len(file);
    float copy[13 * 8];
    memcpy(copy, want.p.wte, sizeof copy);
    if (untie) copy[17] += 1.0f;
    fx_edit_safetensors(file, add_lm_head, &begin, copy, sizeof copy);
    int rc = andrea_model_load(&got, dir, &err);
    if (expect_ok) {
        CHECK_MSG(rc == 0, "%s", err.msg);
        andrea_model_free(&got);
    } else {
        CHECK(rc == -1);
        CHECK_MSG(fx_contains(err.msg, "lm_head.weight") && fx_contains(err.msg, "differs"), "%s", err.msg);
        CHECK(got.memory == NULL);
    }
    andrea_model_free(&want);
}

static void test_safetensors_tied_lm_head_is_accepted(void) { lm_head_case("st-lm-tied", 0, 1); }
static void test_safetensors_untied_lm_head_is_refused(void) { lm_head_case("st-lm-untied", 1, 0); }

/* llm.c files written before vocabulary padding carry 0 in header slot 7: Vp = V, if the length agrees. */
static void test_bin_with_zero_padded_vocab_loads_when_length_agrees(void) {
    andrea_config cfg = fx_tiny_config();
    cfg.padded_vocab_size = cfg.vocab_size;
    const char *path = fx_path(check_tmpdir(), "vp0.bin");
    andrea_model want = fx_make_bin(path, &cfg, 3), got;
    size_t len;
    unsigned char *buf = fx_read(path, &len);
    memset(buf + 7 * 4, 0, 4);
    fx_write(path, buf, len);
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&got, path, &err) == 0, "%s", err.msg);
    CHECK(got.cfg.padded_vocab_size == 13);
    CHECK(memcmp(got.memory, want.memory, want.n_floats * 4) == 0);
    andrea_model_free(&got);
    andrea_model_free(&want);
    free(buf);
}

static void test_bin_with_zero_padded_vocab_is_refused_when_length_disagrees(void) {
    andrea_config cfg = fx_tiny_config(); /* V 13, Vp 16: the file holds 16 rows */
    const char *path = fx_path(check_tmpdir(), "vp0-bad.bin");
    andrea_model want = fx_make_bin(path, &cfg, 3), got;
    size_t len;
    unsigned char *buf = fx_read(path, &len);
    memset(buf + 7 * 4, 0, 4);
    fx_write(path, buf, len);
    ae_error err = {{0}};
    CHECK(andrea_model_load(&got, path, &err) == -1);
    CHECK_MSG(fx_contains(err.msg, "trailing"), "%s", err.msg);
    andrea_model_free(&want);
    free(buf);
}

/* Padding rows are ignored: a NaN there (llm.c does not promise what they hold) loads, as zeros. */
static void test_bin_padding_rows_are_ignored_and_zeroed(void) {
    andrea_config cfg = fx_tiny_config();
    const char *path = fx_path(check_tmpdir(), "pad-nan.bin");
    andrea_model want = fx_make_bin(path, &cfg, 3), got;
    size_t len;
    unsigned char *buf = fx_read(path, &len);
    float nan = NAN, big = 7.0f;
    memcpy(buf + 1024 + 4 * (13 * 8 + 2), &nan, 4); /* row 13 = first padding row */
    memcpy(buf + 1024 + 4 * (15 * 8 + 7), &big, 4); /* last padding row */
    fx_write(path, buf, len);
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&got, path, &err) == 0, "%s", err.msg);
    CHECK(got.p.wte[13 * 8 + 2] == 0.0f && got.p.wte[15 * 8 + 7] == 0.0f);
    CHECK(mismatches(&want, &got, keep) == 0);
    andrea_model_free(&got);
    andrea_model_free(&want);
    free(buf);
}

static void test_bin_read_config_returns_header_config_and_version(void) {
    andrea_config cfg = fx_tiny_config(), got;
    const char *path = fx_path(check_tmpdir(), "peek.bin");
    andrea_model m = fx_make_bin(path, &cfg, 5);
    int version = 0;
    ae_error err = {{0}};
    CHECK_MSG(andrea_bin_read_config(path, &got, &version, &err) == 0, "%s", err.msg);
    CHECK(same_config(&cfg, &got));
    CHECK(version == 5);
    andrea_model_free(&m);
}

static void test_random_init_is_deterministic_and_gpt2_like(void) {
    andrea_config cfg = fx_tiny_config();
    andrea_model a, b, c;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&a, &cfg, 1, &err) == 0);
    CHECK(andrea_model_init_random(&b, &cfg, 1, &err) == 0);
    CHECK(andrea_model_init_random(&c, &cfg, 2, &err) == 0);
    CHECK(memcmp(a.memory, b.memory, a.n_floats * 4) == 0);
    CHECK(memcmp(a.memory, c.memory, a.n_floats * 4) != 0);
    CHECK(a.p.ln1w[0] == 1.0f && a.p.ln2b[3] == 0.0f && a.p.lnfw[7] == 1.0f && a.p.lnfb[7] == 0.0f);
    int pad_zero = 1;
    for (size_t i = 13 * 8; i < 16 * 8; i++) pad_zero &= a.p.wte[i] == 0.0f;
    CHECK(pad_zero);
    double ss = 0;
    for (size_t i = 0; i < 3 * 8 * 8 * 2; i++) ss += (double)a.p.qkvw[i] * a.p.qkvw[i];
    double std = sqrt(ss / (3 * 8 * 8 * 2));
    CHECK_MSG(std > 0.015 && std < 0.025, "qkvw std %g (want about 0.02)", std);
    CHECK(andrea_model_check_finite(&a, &err) == 0);
    andrea_model_free(&a);
    andrea_model_free(&b);
    andrea_model_free(&c);
}

/* The converters against values whose rounding is known by hand. */
static void test_half_conversions_round_to_nearest_even(void) {
    CHECK(andrea_f32_to_bf16(1.0f) == 0x3f80);
    CHECK(andrea_f32_to_bf16(1.0f + 1.0f / 256) == 0x3f80);       /* tie: stays even */
    CHECK(andrea_f32_to_bf16(1.0f + 3.0f / 256) == 0x3f82);       /* tie: rounds up to even */
    CHECK(andrea_f32_to_f16(1.0f) == 0x3c00);
    CHECK(andrea_f32_to_f16(65504.0f) == 0x7bff);
    CHECK(andrea_f32_to_f16(70000.0f) == 0x7c00);                 /* overflow -> Inf */
    CHECK(andrea_f32_to_f16(-2.0f) == 0xc000);
    CHECK(andrea_f16_to_f32(0x0001) == ldexpf(1.0f, -24));        /* smallest subnormal */
    CHECK(andrea_f32_to_f16(ldexpf(1.0f, -24)) == 0x0001);
    CHECK(andrea_f16_to_f32(0x3555) == 0.333251953125f);
    CHECK(isnan(andrea_f16_to_f32(andrea_f32_to_f16(NAN))));
    /* the subnormal range against the libm formulas the fast paths replace: every fp16 subnormal,
     * every 61st fp32 below 2^-14 (either sign) and every tie (k + 1/2) 2^-24 */
    int sub_bad = 0;
    for (uint32_t mant = 0; mant < 1024; mant++)
        sub_bad += andrea_f16_to_f32((uint16_t)mant) != ldexpf((float)mant, -24) ||
                   andrea_f16_to_f32((uint16_t)(0x8000u | mant)) != -ldexpf((float)mant, -24);
    for (uint32_t k = 0; k < 1024; k++)
        sub_bad += andrea_f32_to_f16(ldexpf((float)k + 0.5f, -24)) != (uint16_t)nearbyintf((float)k + 0.5f);
    for (uint32_t u = 0; u < 0x38800000u; u += 61) {
        union { uint32_t u; float f; } v = {u}, n = {u | 0x80000000u};
        const uint16_t want = (uint16_t)nearbyintf(ldexpf(v.f, 24));
        sub_bad += andrea_f32_to_f16(v.f) != want || andrea_f32_to_f16(n.f) != (0x8000u | want);
    }
    CHECK_MSG(sub_bad == 0, "%d fp16 subnormal conversions differ from ldexpf/nearbyintf", sub_bad);
    CHECK(isnan(andrea_bf16_to_f32(andrea_f32_to_bf16(NAN))));
    CHECK(andrea_f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00);       /* tie: stays even */
    CHECK(andrea_f32_to_f16(1.0f + 3.0f / 2048) == 0x3c02);       /* tie: rounds up to even */
}

/* The safetensors reader converts in pieces of whole rows (<= 4 MB of the file each) on several
 * threads: tensors many pieces long (a d 1024 model's Conv1D weights, 4 to 16 MB) come back
 * exactly, transposed, in F32 and BF16; a NaN in a later piece of a transposed tensor is named
 * with its element index in the file's Conv1D layout, where the user finds it (the Linear
 * layout's index, which andrea computes in, named another element of that tensor). */
static void test_safetensors_tensors_of_many_pieces_round_trip(void) {
    andrea_config cfg = {.max_seq_len = 16, .vocab_size = 300, .padded_vocab_size = 320, .n_layer = 1,
                         .n_head = 8, .d_model = 1024};
    andrea_model want, got;
    ae_error err = {{0}};
    CHECK(andrea_model_init_random(&want, &cfg, 11, &err) == 0);
    const char *dtypes[2] = {"F32", "BF16"};
    rounding_fn rounds[2] = {keep, via_bf16};
    for (int k = 0; k < 2; k++) {
        const char *dir = fx_path(check_tmpdir(), k ? "st-pieces-bf16" : "st-pieces-f32");
        CHECK_MSG(andrea_model_save_safetensors(&want, dir, dtypes[k], 1, &err) == 0, "%s", err.msg);
        CHECK_MSG(andrea_model_load(&got, dir, &err) == 0, "%s", err.msg);
        if (got.memory) CHECK_MSG(mismatches(&want, &got, rounds[k]) == 0, "%s", dtypes[k]);
        andrea_model_free(&got);
    }
    want.p.fcw[(size_t)5 * 1024 + 700] = NAN; /* Linear [4C, C]: out 5, in 700, stored row 700 (piece 3 of 4) */
    const char *dir = fx_path(check_tmpdir(), "st-pieces-nan");
    CHECK_MSG(andrea_model_save_safetensors(&want, dir, "F32", 1, &err) == 0, "%s", err.msg);
    CHECK(andrea_model_load(&got, dir, &err) != 0);
    CHECK_MSG(strstr(err.msg, "tensor transformer.h.0.mlp.c_fc.weight holds a non-finite value (NaN at element 2867205, [700, 5] as stored)") != NULL,
              "%s", err.msg);
    CHECK(got.memory == NULL);
    andrea_model_free(&want);
}

int main(void) {
    RUN(test_bin_v3_round_trip_is_exact);
    RUN(test_bin_v5_round_trip_equals_bf16_rounding);
    RUN(test_safetensors_f32_round_trip_is_exact_with_prefix);
    RUN(test_safetensors_f32_round_trip_is_exact_without_prefix);
    RUN(test_safetensors_f16_round_trip_equals_f16_rounding);
    RUN(test_safetensors_bf16_round_trip_equals_bf16_rounding);
    RUN(test_safetensors_conv1d_weight_is_transposed_to_linear_layout);
    RUN(test_safetensors_causal_mask_buffers_are_ignored);
    RUN(test_safetensors_tied_lm_head_is_accepted);
    RUN(test_safetensors_untied_lm_head_is_refused);
    RUN(test_bin_with_zero_padded_vocab_loads_when_length_agrees);
    RUN(test_bin_with_zero_padded_vocab_is_refused_when_length_disagrees);
    RUN(test_bin_padding_rows_are_ignored_and_zeroed);
    RUN(test_bin_read_config_returns_header_config_and_version);
    RUN(test_random_init_is_deterministic_and_gpt2_like);
    RUN(test_half_conversions_round_to_nearest_even);
    RUN(test_safetensors_tensors_of_many_pieces_round_trip);
    return check_summary("test_checkpoint_roundtrip");
}
