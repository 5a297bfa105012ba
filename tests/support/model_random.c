/* model_random.c — random models and the .bin / safetensors writers (see model_random.h). */
#include "model_random.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/atomic_file.h"
#include "../../engine/checkpoint.h"
#include "../../common/half.h"
#include "../../common/rng.h"

/* ---- deterministic normal RNG: splitmix64 -> 53-bit uniforms -> Box-Muller ---- */

typedef struct {
    uint64_t s;
    int have;
    double spare;
} rng_t;

static double uniform01(rng_t *r) { /* in (0, 1]: safe for log() */
    return ((double)(ae_splitmix64(&r->s) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

static double normal(rng_t *r) {
    if (r->have) {
        r->have = 0;
        return r->spare;
    }
    double u1 = uniform01(r), u2 = uniform01(r);
    double rad = sqrt(-2.0 * log(u1)), th = 6.283185307179586 * u2;
    r->spare = rad * sin(th);
    r->have = 1;
    return rad * cos(th);
}

static void fill_normal(float *p, size_t n, double std, rng_t *r) {
    for (size_t i = 0; i < n; i++) p[i] = (float)(std * normal(r));
}

int andrea_model_init_random(andrea_model *m, const andrea_config *cfg, uint64_t seed, ae_error *err) {
    memset(m, 0, sizeof *m);
    andrea_config full = *cfg; /* derived sizes may be left 0 by the caller */
    if (full.head_dim == 0 && full.n_head > 0) full.head_dim = full.d_model / full.n_head;
    if (full.padded_vocab_size == 0) full.padded_vocab_size = full.vocab_size;
    cfg = &full;
    if (andrea_model_alloc(m, cfg, err)) return andrea_prefix(err, "random model");
    size_t sizes[ANDREA_N_PARAM_TENSORS], total;
    andrea_param_sizes(cfg, sizes, &total, NULL); /* cannot fail: alloc validated cfg */
    rng_t r = {seed, 0, 0.0};
    const double std = 0.02, proj_std = 0.02 / sqrt(2.0 * cfg->n_layer);
    size_t C = (size_t)cfg->d_model, V = (size_t)cfg->vocab_size, Vp = (size_t)cfg->padded_vocab_size;
    andrea_params *p = &m->p;
    fill_normal(p->wte, V * C, std, &r);
    memset(p->wte + V * C, 0, (Vp - V) * C * sizeof(float)); /* padding rows */
    fill_normal(p->wpe, sizes[1], std, &r);
    for (size_t i = 0; i < sizes[2]; i++) p->ln1w[i] = 1.0f;
    memset(p->ln1b, 0, sizes[3] * sizeof(float));
    fill_normal(p->qkvw, sizes[4], std, &r);
    fill_normal(p->qkvb, sizes[5], std, &r);
    fill_normal(p->attprojw, sizes[6], proj_std, &r);
    fill_normal(p->attprojb, sizes[7], std, &r);
    for (size_t i = 0; i < sizes[8]; i++) p->ln2w[i] = 1.0f;
    memset(p->ln2b, 0, sizes[9] * sizeof(float));
    fill_normal(p->fcw, sizes[10], std, &r);
    fill_normal(p->fcb, sizes[11], std, &r);
    fill_normal(p->fcprojw, sizes[12], proj_std, &r);
    fill_normal(p->fcprojb, sizes[13], std, &r);
    for (size_t i = 0; i < C; i++) {
        p->lnfw[i] = 1.0f;
        p->lnfb[i] = 0.0f;
    }
    m->format = ANDREA_FMT_BIN;
    snprintf(m->stored_dtype, sizeof m->stored_dtype, "fp32");
    snprintf(m->path, sizeof m->path, "random:%llu", (unsigned long long)seed);
    snprintf(m->dir, sizeof m->dir, ".");
    return 0;
}

/* ---- writers ---- */

enum { W_F32, W_F16, W_BF16 };
#define W_CHUNK 65536

/* An output file under its temporary name; the first failure sticks in err. */
typedef struct {
    FILE *f;
    char tmp[AE_PATH_MAX + 32];
    const char *path;
    int failed;
    uint16_t half[W_CHUNK];
} writer;

static int w_open(writer *w, const char *path, ae_error *err) {
    w->path = path;
    w->failed = 0;
    if (andrea_tmp_begin(path, w->tmp, sizeof w->tmp, err)) return -1;
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        andrea_fail(err, "%s: cannot create: %s", w->tmp, strerror(errno));
        andrea_tmp_abort(w->tmp);
        return -1;
    }
    return 0;
}

static void w_bytes(writer *w, const void *p, size_t n, ae_error *err) {
    if (!w->failed && n > 0 && fwrite(p, 1, n, w->f) != n) {
        w->failed = 1;
        andrea_fail(err, "%s: write error: %s", w->path, strerror(errno));
    }
}

static void w_floats(writer *w, const float *v, size_t n, int dtype, ae_error *err) {
    if (dtype == W_F32) {
        w_bytes(w, v, n * sizeof(float), err);
        return;
    }
    for (size_t i = 0; i < n; i += W_CHUNK) {
        size_t k = n - i < W_CHUNK ? n - i : W_CHUNK;
        for (size_t j = 0; j < k; j++)
            w->half[j] = dtype == W_BF16 ? andrea_f32_to_bf16(v[i + j]) : andrea_f32_to_f16(v[i + j]);
        w_bytes(w, w->half, k * 2, err);
    }
}

/* Closes and renames into place, or removes the temporary. */
static int w_close(writer *w, ae_error *err) {
    if (fclose(w->f) != 0 && !w->failed) {
        w->failed = 1;
        andrea_fail(err, "%s: write error: %s", w->path, strerror(errno));
    }
    if (w->failed) {
        andrea_tmp_abort(w->tmp);
        return -1;
    }
    return andrea_tmp_commit(w->tmp, w->path, err);
}

int andrea_model_save_bin(const andrea_model *m, const char *path, int version, ae_error *err) {
    if (version != 3 && version != 5) return andrea_fail(err, "%s: version %d (3 = fp32, 5 = bf16)", path, version);
    int32_t hdr[ANDREA_BIN_HEADER_INTS] = {0};
    hdr[0] = ANDREA_BIN_MAGIC;
    hdr[1] = version;
    hdr[2] = m->cfg.max_seq_len;
    hdr[3] = m->cfg.vocab_size;
    hdr[4] = m->cfg.n_layer;
    hdr[5] = m->cfg.n_head;
    hdr[6] = m->cfg.d_model;
    hdr[7] = m->cfg.padded_vocab_size;
    writer *w = malloc(sizeof *w);
    if (!w) return andrea_fail(err, "%s: out of memory", path);
    if (w_open(w, path, err)) {
        free(w);
        return -1;
    }
    w_bytes(w, hdr, sizeof hdr, err);
    w_floats(w, m->memory, m->n_floats, version == 3 ? W_F32 : W_BF16, err);
    int rc = w_close(w, err);
    free(w);
    return rc;
}

/* One safetensors tensor to write: its source in the model and its stored shape. */
typedef struct {
    char name[96];
    const float *src;
    size_t rows, cols; /* stored shape [rows, cols]; cols = 0 for 1-D */
    int transpose;     /* src is Linear [cols, rows]; stored Conv1D [rows, cols] */
} out_tensor;

static int build_tensor_list(const andrea_model *m, int with_prefix, out_tensor **out, size_t *count,
                             ae_error *err) {
    const andrea_config *c = &m->cfg;
    size_t L = (size_t)c->n_layer, C = (size_t)c->d_model;
    size_t n = 4 + 12 * L;
    out_tensor *t = calloc(n, sizeof *t);
    if (!t) return andrea_fail(err, "out of memory");
    const char *pre = with_prefix ? "transformer." : "";
    size_t k = 0;
#define ADD(src_, rows_, cols_, tr_, ...)                                      \
    do {                                                                       \
        int nn_ = snprintf(t[k].name, sizeof t[k].name, "%s", pre);            \
        snprintf(t[k].name + nn_, sizeof t[k].name - (size_t)nn_, __VA_ARGS__); \
        t[k].src = (src_);                                                     \
        t[k].rows = (rows_);                                                   \
        t[k].cols = (cols_);                                                   \
        t[k].transpose = (tr_);                                                \
        k++;                                                                   \
    } while (0)
    const andrea_params *p = &m->p;
    ADD(p->wte, (size_t)c->vocab_size, C, 0, "wte.weight");
    ADD(p->wpe, (size_t)c->max_seq_len, C, 0, "wpe.weight");
    for (size_t l = 0; l < L; l++) {
        ADD(p->ln1w + l * C, C, 0, 0, "h.%zu.ln_1.weight", l);
        ADD(p->ln1b + l * C, C, 0, 0, "h.%zu.ln_1.bias", l);
        ADD(p->qkvw + l * 3 * C * C, C, 3 * C, 1, "h.%zu.attn.c_attn.weight", l);
        ADD(p->qkvb + l * 3 * C, 3 * C, 0, 0, "h.%zu.attn.c_attn.bias", l);
        ADD(p->attprojw + l * C * C, C, C, 1, "h.%zu.attn.c_proj.weight", l);
        ADD(p->attprojb + l * C, C, 0, 0, "h.%zu.attn.c_proj.bias", l);
        ADD(p->ln2w + l * C, C, 0, 0, "h.%zu.ln_2.weight", l);
        ADD(p->ln2b + l * C, C, 0, 0, "h.%zu.ln_2.bias", l);
        ADD(p->fcw + l * 4 * C * C, C, 4 * C, 1, "h.%zu.mlp.c_fc.weight", l);
        ADD(p->fcb + l * 4 * C, 4 * C, 0, 0, "h.%zu.mlp.c_fc.bias", l);
        ADD(p->fcprojw + l * 4 * C * C, 4 * C, C, 1, "h.%zu.mlp.c_proj.weight", l);
        ADD(p->fcprojb + l * C, C, 0, 0, "h.%zu.mlp.c_proj.bias", l);
    }
    ADD(p->lnfw, C, 0, 0, "ln_f.weight");
    ADD(p->lnfb, C, 0, 0, "ln_f.bias");
#undef ADD
    *out = t;
    *count = k;
    return 0;
}

/* Appends a number to a JSON array; 0 when cJSON has no memory for it. */
static int add_number(cJSON *arr, double v) {
    cJSON *n = cJSON_CreateNumber(v);
    if (n && cJSON_AddItemToArray(arr, n)) return 1;
    cJSON_Delete(n);
    return 0;
}

static int write_config_json(const andrea_model *m, const char *path, const char *dtype, ae_error *err) {
    const andrea_config *c = &m->cfg;
    cJSON *o = cJSON_CreateObject();
    cJSON *arch = cJSON_CreateStringArray((const char *const[]){"GPT2LMHeadModel"}, 1);
    if (!o || !arch) {
        cJSON_Delete(o);
        cJSON_Delete(arch);
        return andrea_fail(err, "%s: out of memory", path);
    }
    if (!cJSON_AddItemToObject(o, "architectures", arch)) {
        cJSON_Delete(o);
        cJSON_Delete(arch);
        return andrea_fail(err, "%s: out of memory", path);
    }
    /* a field cJSON could not allocate would be missing from the file: out of memory instead */
    const int ok =
        cJSON_AddStringToObject(o, "model_type", "gpt2") && cJSON_AddNumberToObject(o, "vocab_size", c->vocab_size) &&
        cJSON_AddNumberToObject(o, "n_positions", c->max_seq_len) &&
        cJSON_AddNumberToObject(o, "n_ctx", c->max_seq_len) && cJSON_AddNumberToObject(o, "n_embd", c->d_model) &&
        cJSON_AddNumberToObject(o, "n_layer", c->n_layer) && cJSON_AddNumberToObject(o, "n_head", c->n_head) &&
        cJSON_AddNullToObject(o, "n_inner") && cJSON_AddStringToObject(o, "activation_function", "gelu_new") &&
        cJSON_AddNumberToObject(o, "layer_norm_epsilon", 1e-5) && cJSON_AddBoolToObject(o, "scale_attn_weights", 1) &&
        cJSON_AddBoolToObject(o, "tie_word_embeddings", 1) &&
        cJSON_AddStringToObject(o, "torch_dtype",
                                !strcmp(dtype, "F32") ? "float32" : !strcmp(dtype, "F16") ? "float16" : "bfloat16");
    char *text = ok ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (!text) return andrea_fail(err, "%s: out of memory", path);
    writer *w = malloc(sizeof *w);
    int rc = -1;
    if (!w) {
        andrea_fail(err, "%s: out of memory", path);
    } else if (w_open(w, path, err) == 0) {
        w_bytes(w, text, strlen(text), err);
        w_bytes(w, "\n", 1, err);
        rc = w_close(w, err);
    }
    free(w);
    cJSON_free(text);
    return rc;
}

int andrea_model_save_safetensors(const andrea_model *m, const char *dir, const char *dtype, int with_prefix,
                                  ae_error *err) {
    int dt = !strcmp(dtype, "F32") ? W_F32 : !strcmp(dtype, "F16") ? W_F16 : !strcmp(dtype, "BF16") ? W_BF16 : -1;
    if (dt < 0) return andrea_fail(err, "%s: dtype %s (F32, F16 or BF16)", dir, dtype);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return andrea_fail(err, "%s: cannot create: %s", dir, strerror(errno));
    char st_path[AE_PATH_MAX], cfg_path[AE_PATH_MAX];
    if (snprintf(st_path, sizeof st_path, "%s/model.safetensors", dir) >= (int)sizeof st_path ||
        snprintf(cfg_path, sizeof cfg_path, "%s/config.json", dir) >= (int)sizeof cfg_path)
        return andrea_fail(err, "%s: path too long", dir);

    out_tensor *t = NULL;
    size_t nt = 0;
    if (build_tensor_list(m, with_prefix, &t, &nt, err)) return andrea_prefix(err, "%s", st_path);
    size_t es = dt == W_F32 ? 4 : 2;

    int rc = -1;
    char *hdr_text = NULL, *padded = NULL;
    float *row = NULL;
    writer *w = NULL;
    cJSON *root = cJSON_CreateObject(), *meta = cJSON_CreateObject();
    if (!root || !meta) {
        cJSON_Delete(meta);
        andrea_fail(err, "%s: out of memory", st_path);
        goto done;
    }
    if (!cJSON_AddStringToObject(meta, "format", "pt") || !cJSON_AddItemToObject(root, "__metadata__", meta)) {
        cJSON_Delete(meta);
        andrea_fail(err, "%s: out of memory", st_path);
        goto done;
    }
    size_t off = 0, max_cols = 1;
    for (size_t i = 0; i < nt; i++) {
        size_t n = t[i].rows * (t[i].cols ? t[i].cols : 1);
        cJSON *e = cJSON_CreateObject(), *shape = cJSON_CreateArray(), *offs = cJSON_CreateArray();
        if (!e || !shape || !offs) {
            cJSON_Delete(e);
            cJSON_Delete(shape);
            cJSON_Delete(offs);
            andrea_fail(err, "%s: out of memory", st_path);
            goto done;
        }
        /* an entry cJSON could not complete would make a header that lies about the data */
        int ok = cJSON_AddStringToObject(e, "dtype", dtype) &&
                 add_number(shape, (double)t[i].rows) && (!t[i].cols || add_number(shape, (double)t[i].cols)) &&
                 add_number(offs, (double)off) && add_number(offs, (double)(off + n * es));
        if (ok && cJSON_AddItemToObject(e, "shape", shape)) shape = NULL; /* e owns it now */
        else ok = 0;
        if (ok && cJSON_AddItemToObject(e, "data_offsets", offs)) offs = NULL;
        else ok = 0;
        if (ok && cJSON_AddItemToObject(root, t[i].name, e)) e = NULL;
        else ok = 0;
        if (!ok) {
            cJSON_Delete(e);
            cJSON_Delete(shape);
            cJSON_Delete(offs);
            andrea_fail(err, "%s: out of memory", st_path);
            goto done;
        }
        off += n * es;
        if (t[i].cols > max_cols) max_cols = t[i].cols;
    }
    hdr_text = cJSON_PrintUnformatted(root);
    if (!hdr_text) {
        andrea_fail(err, "%s: out of memory", st_path);
        goto done;
    }
    /* the format pads the header with spaces so that the data section starts 8-aligned */
    size_t hl = strlen(hdr_text), hp = (hl + 7) / 8 * 8;
    padded = malloc(hp);
    row = malloc(max_cols * sizeof *row);
    w = malloc(sizeof *w);
    if (!padded || !row || !w) {
        andrea_fail(err, "%s: out of memory", st_path);
        goto done;
    }
    memcpy(padded, hdr_text, hl);
    memset(padded + hl, ' ', hp - hl);
    if (w_open(w, st_path, err)) goto done;
    uint64_t n_hdr = hp;
    w_bytes(w, &n_hdr, 8, err);
    w_bytes(w, padded, hp, err);
    for (size_t i = 0; i < nt && !w->failed; i++) {
        if (!t[i].transpose) {
            w_floats(w, t[i].src, t[i].rows * (t[i].cols ? t[i].cols : 1), dt, err);
            continue;
        }
        /* stored Conv1D [in = rows, out = cols]; source Linear [out, in] */
        for (size_t r = 0; r < t[i].rows; r++) {
            for (size_t c = 0; c < t[i].cols; c++) row[c] = t[i].src[c * t[i].rows + r];
            w_floats(w, row, t[i].cols, dt, err);
        }
    }
    if (w_close(w, err)) goto done;
    rc = write_config_json(m, cfg_path, dtype, err);
done:
    free(w);
    free(row);
    free(padded);
    cJSON_free(hdr_text);
    cJSON_Delete(root);
    free(t);
    return rc;
}
