/* checkpoint_peek.c — andrea_checkpoint_peek_config (model.h): a checkpoint's config and folder
 * without its weights.
 * Picks the format as andrea_model_load does (folder, one file or sharded -> config.json inside;
 * *.safetensors or a shards' *.safetensors.index.json -> config.json beside; anything else ->
 * ANDREA .bin header). The checks are the loader's own:
 * andrea_bin_read_config (checkpoint_bin.c: magic, version, sizes, exact file length) and
 * andrea_config_json_read + andrea_param_sizes, so peek and load cannot drift apart and refuse a
 * file with the same message. Weights (NaN/Inf, safetensors offsets) are not looked at.
 * Failure contract: -1 with "PATH: problem"; cfg and dir are written only on success. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "checkpoint.h"
#include "model.h"

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int put(char *out, size_t cap, const char *path, ae_error *err, const char *fmt, const char *a,
               int alen, const char *b) {
    int n = snprintf(out, cap, fmt, alen, a, b);
    if (n < 0 || (size_t)n >= cap) return andrea_fail(err, "%.200s: path too long", path);
    return 0;
}

int andrea_checkpoint_peek_config(const char *path, andrea_config *cfg, char *dir, size_t dircap,
                                  ae_error *err) {
    struct stat st;
    if (!path[0]) return andrea_fail(err, "the checkpoint's path is empty");
    if (stat(path, &st) != 0) return andrea_fail(err, "%s: cannot open: %s", path, strerror(errno));
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
    if (is_dir || ends_with(path, ".safetensors") || ends_with(path, ".safetensors.index.json")) {
        if (put(cfg_path, sizeof cfg_path, path, err, "%.*s/%s", folder, (int)strlen(folder), "config.json") ||
            andrea_config_json_read(cfg_path, &c, err))
            return -1;
        size_t sizes[ANDREA_N_PARAM_TENSORS], total;
        if (andrea_param_sizes(&c, sizes, &total, err)) return andrea_prefix(err, "%s", cfg_path);
    } else if (!S_ISREG(st.st_mode)) {
        return andrea_fail(err, "%s: not a regular file or folder", path);
    } else if (andrea_bin_read_config(path, &c, NULL, err)) {
        return -1;
    }
    if (strlen(folder) >= dircap) return andrea_fail(err, "%.200s: path too long", path);
    snprintf(dir, dircap, "%s", folder);
    *cfg = c;
    return 0;
}
