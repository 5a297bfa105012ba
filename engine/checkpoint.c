/* checkpoint.c — andrea_model_load: picks the reader for a path, then finishes the model
 * (path, folder, finite check). See checkpoint.h for the contract. */
#include "checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/sha256.h"

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
    if (n < 0 || (size_t)n >= cap) return ae_fail(err, "%s: path too long", dir);
    return 0;
}

int andrea_model_load(andrea_model *m, const char *path, ae_error *err) {
    memset(m, 0, sizeof *m);
    if (strlen(path) >= sizeof m->path) return ae_fail(err, "%.200s...: path too long", path);
    struct stat st;
    if (stat(path, &st) != 0) return ae_fail(err, "%s: cannot open: %s", path, strerror(errno));

    char dir[sizeof m->dir], st_path[sizeof m->path], cfg_path[sizeof m->path];
    int rc;
    if (S_ISDIR(st.st_mode)) {
        snprintf(dir, sizeof dir, "%s", path);
        if (join(st_path, sizeof st_path, path, "model.safetensors", err) ||
            join(cfg_path, sizeof cfg_path, path, "config.json", err))
            return -1;
        if (stat(st_path, &st) != 0)
            return ae_fail(err, "%s: folder holds no model.safetensors (a checkpoint folder needs "
                                "model.safetensors + config.json)", path);
        rc = andrea_load_safetensors(m, st_path, cfg_path, err);
    } else if (!S_ISREG(st.st_mode)) {
        return ae_fail(err, "%s: not a regular file or folder", path);
    } else if (ends_with(path, ".safetensors")) {
        dirname_of(path, dir, sizeof dir);
        if (join(cfg_path, sizeof cfg_path, dir, "config.json", err)) return -1;
        rc = andrea_load_safetensors(m, path, cfg_path, err);
    } else {
        dirname_of(path, dir, sizeof dir);
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
    if (andrea_model_check_finite(m, err)) {
        andrea_model_free(m);
        return -1;
    }
    return 0;
}

int andrea_checkpoint_weights_file(const andrea_model *m, char *out, size_t cap, ae_error *err) {
    struct stat st;
    if (stat(m->path, &st) == 0 && S_ISDIR(st.st_mode))
        return join(out, cap, m->path, "model.safetensors", err);
    int n = snprintf(out, cap, "%s", m->path);
    if (n < 0 || (size_t)n >= cap) return ae_fail(err, "%s: path too long", m->path);
    return 0;
}

int andrea_checkpoint_sha256(const andrea_model *m, char hex[65], ae_error *err) {
    char file[sizeof m->path + 32];
    if (andrea_checkpoint_weights_file(m, file, sizeof file, err)) return -1;
    return ae_sha256_file(file, hex, err);
}

const char *andrea_printable(const char *s, char *buf, size_t cap) {
    if (cap == 0) return buf;
    size_t n = strlen(s), k = 0;
    for (; k < n && k + 1 < cap; k++) buf[k] = s[k] >= 0x20 && s[k] < 0x7f ? s[k] : '?';
    buf[k] = '\0';
    if (k < n && cap >= 4) memcpy(buf + cap - 4, "...", 4);
    return buf;
}

/* ---- number conversions ---- */

float andrea_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    union { uint32_t u; float f; } v;
    if (exp == 0x1f) {
        v.u = sign | 0x7f800000u | (mant << 13); /* Inf or NaN */
    } else if (exp == 0) {
        /* zero or subnormal: mant * 2^-24, exact in fp32 */
        float f = ldexpf((float)mant, -24);
        return sign ? -f : f;
    } else {
        v.u = sign | ((exp + 112) << 23) | (mant << 13);
    }
    return v.f;
}

uint16_t andrea_f32_to_bf16(float f) {
    union { float f; uint32_t u; } v = {f};
    if ((v.u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((v.u >> 16) | 0x40); /* quiet NaN */
    uint32_t rounding = 0x7fffu + ((v.u >> 16) & 1u);
    return (uint16_t)((v.u + rounding) >> 16);
}

uint16_t andrea_f32_to_f16(float f) {
    union { float f; uint32_t u; } v = {f};
    uint16_t sign = (uint16_t)((v.u >> 16) & 0x8000u);
    uint32_t a = v.u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u;         /* NaN */
    if (a >= 0x477ff000u) return sign | 0x7c00u;        /* >= 65520 rounds to Inf */
    if (a < 0x38800000u) {                              /* below the smallest normal 2^-14 */
        /* subnormal: value / 2^-24, rounded to nearest even by the FPU */
        float x = ldexpf(fabsf(f), 24);
        return sign | (uint16_t)nearbyintf(x);
    }
    uint32_t exp = (a >> 23) - 112, mant = a & 0x7fffffu;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* carry into exp is correct */
    return sign | (uint16_t)h;
}
