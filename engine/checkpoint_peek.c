/* checkpoint_peek.c — andrea_checkpoint_peek_config (model.h): a checkpoint's config and folder
 * without its weights.
 * Picks the format as andrea_model_load does (folder -> config.json inside; *.safetensors ->
 * config.json beside; anything else -> ANDREA .bin header). For a .bin the header is validated
 * (magic, version, sizes via andrea_param_sizes) and the file length must equal what the header
 * implies, so a truncated file is refused here as it would be by the loader.
 * config.json gets the same size checks. Weights (NaN/Inf, safetensors offsets) are not looked at.
 * Failure contract: -1 with "PATH: problem"; cfg and dir are written only on success. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/checked_size.h"
#include "checkpoint.h"
#include "model.h"

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int put(char *out, size_t cap, const char *path, ae_error *err, const char *fmt, const char *a,
               int alen, const char *b) {
    int n = snprintf(out, cap, fmt, alen, a, b);
    if (n < 0 || (size_t)n >= cap) return ae_fail(err, "%.200s: path too long", path);
    return 0;
}

static int peek_bin(const char *path, andrea_config *cfg, ae_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return ae_fail(err, "%s: cannot open: %s", path, strerror(errno));
    int32_t hdr[ANDREA_BIN_HEADER_INTS];
    struct stat st;
    int rc = -1;
    if (fstat(fileno(f), &st) != 0) {
        ae_fail(err, "%s: cannot stat: %s", path, strerror(errno));
        goto out;
    }
    if ((size_t)st.st_size < sizeof hdr || fread(hdr, 1, sizeof hdr, f) != sizeof hdr) {
        ae_fail(err, "%s: truncated: %lld bytes, shorter than the %zu-byte header", path,
                (long long)st.st_size, sizeof hdr);
        goto out;
    }
    if (hdr[0] != ANDREA_BIN_MAGIC) {
        ae_fail(err, "%s: bad magic %d (expected %d: not an ANDREA/llm.c .bin checkpoint)", path, hdr[0],
                ANDREA_BIN_MAGIC);
        goto out;
    }
    if (hdr[1] != 3 && hdr[1] != 5) {
        ae_fail(err, "%s: unsupported version %d (3 = fp32 and 5 = bf16 are supported)", path, hdr[1]);
        goto out;
    }
    andrea_config c = {.max_seq_len = hdr[2], .vocab_size = hdr[3], .n_layer = hdr[4], .n_head = hdr[5],
                       .d_model = hdr[6], .padded_vocab_size = hdr[7]};
    if (c.padded_vocab_size == 0) c.padded_vocab_size = c.vocab_size; /* pre-padding llm.c files */
    c.head_dim = c.n_head > 0 ? c.d_model / c.n_head : 0;
    size_t sizes[ANDREA_N_PARAM_TENSORS], total, want;
    if (andrea_param_sizes(&c, sizes, &total, err)) {
        ae_prefix(err, "%s: header", path);
        goto out;
    }
    if (ae_mul(total, hdr[1] == 3 ? 4 : 2, &want) || ae_add(want, sizeof hdr, &want)) {
        ae_fail(err, "%s: header sizes overflow", path);
        goto out;
    }
    if ((size_t)st.st_size != want) {
        ae_fail(err, "%s: %s: the header needs %zu bytes, the file has %lld", path,
                (size_t)st.st_size < want ? "truncated" : "trailing bytes after the parameters", want,
                (long long)st.st_size);
        goto out;
    }
    *cfg = c;
    rc = 0;
out:
    fclose(f);
    return rc;
}

int andrea_checkpoint_peek_config(const char *path, andrea_config *cfg, char *dir, size_t dircap,
                                  ae_error *err) {
    struct stat st;
    if (stat(path, &st) != 0) return ae_fail(err, "%s: cannot open: %s", path, strerror(errno));
    char folder[4096], cfg_path[4200];
    const char *slash = strrchr(path, '/');
    int is_dir = S_ISDIR(st.st_mode);
    if (is_dir) {
        if (put(folder, sizeof folder, path, err, "%.*s%s", path, (int)strlen(path), "")) return -1;
    } else if (!slash) {
        snprintf(folder, sizeof folder, ".");
    } else if (put(folder, sizeof folder, path, err, "%.*s%s", path, slash == path ? 1 : (int)(slash - path), "")) {
        return -1;
    }
    andrea_config c;
    if (is_dir || ends_with(path, ".safetensors")) {
        if (put(cfg_path, sizeof cfg_path, path, err, "%.*s/%s", folder, (int)strlen(folder), "config.json") ||
            andrea_config_json_read(cfg_path, &c, err))
            return -1;
        size_t sizes[ANDREA_N_PARAM_TENSORS], total;
        if (andrea_param_sizes(&c, sizes, &total, err)) return ae_prefix(err, "%s", cfg_path);
    } else if (!S_ISREG(st.st_mode)) {
        return ae_fail(err, "%s: not a regular file or folder", path);
    } else if (peek_bin(path, &c, err)) {
        return -1;
    }
    if (strlen(folder) >= dircap) return ae_fail(err, "%.200s: path too long", path);
    snprintf(dir, dircap, "%s", folder);
    *cfg = c;
    return 0;
}
