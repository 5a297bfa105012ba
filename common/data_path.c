/* data_path.c — finds andrea's data folders relative to the running binary (see data_path.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data_path.h"

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder of the running binary (no trailing slash), or -1. */
static int exe_dir(char *out, size_t n) {
    ssize_t k = readlink("/proc/self/exe", out, n - 1);
    if (k <= 0 || (size_t)k >= n - 1) return -1;
    out[k] = 0;
    char *slash = strrchr(out, '/');
    if (!slash) return -1;
    *slash = 0;
    return 0;
}

/* The source folder named by the build-tree marker in dir, or -1. */
static int read_marker(const char *dir, char *out, size_t n) {
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, ANDREA_BUILD_TREE_MARKER) >= sizeof path) return -1;
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char *got = fgets(out, (int)n, f);
    fclose(f);
    if (!got) return -1;
    out[strcspn(out, "\r\n")] = 0;
    return out[0] ? 0 : -1;
}

int andrea_data_dir(const char *sub, const char *env, char *out, size_t n, ae_error *err) {
    const char *v = env ? getenv(env) : NULL;
    if (v && *v) {
        if (strlen(v) >= n) return andrea_fail(err, "%s: %s is too long", v, env);
        memcpy(out, v, strlen(v) + 1);
        return 0;
    }
    char bin[4096], looked[2 * 4096 + 64] = "";
    if (exe_dir(bin, sizeof bin) == 0) {
        /* 2. an install: PREFIX/bin/andrea -> PREFIX/share/andrea/SUB */
        char cand[4096], *prefix = NULL;
        if ((size_t)snprintf(cand, sizeof cand, "%s/..", bin) < sizeof cand) prefix = realpath(cand, NULL);
        if ((size_t)snprintf(cand, sizeof cand, "%s/share/andrea/%s", prefix ? prefix : bin, sub) < sizeof cand) {
            if (is_dir(cand) && strlen(cand) < n) {
                memcpy(out, cand, strlen(cand) + 1);
                free(prefix);
                return 0;
            }
            snprintf(looked, sizeof looked, "%s", cand);
        }
        free(prefix);
        /* 3. the build tree: the marker next to the binary, or one or two folders up (build/tests,
         * build/tests/fuzz) */
        for (int up = 0; up < 3; up++) {
            char dir[4096], src[4096];
            if ((size_t)snprintf(dir, sizeof dir, "%s%s", bin, up == 2 ? "/../.." : up ? "/.." : "") >= sizeof dir) continue;
            if (read_marker(dir, src, sizeof src)) continue;
            if ((size_t)snprintf(cand, sizeof cand, "%s/%s", src, sub) >= sizeof cand) continue;
            if (is_dir(cand) && strlen(cand) < n) {
                memcpy(out, cand, strlen(cand) + 1);
                return 0;
            }
            size_t l = strlen(looked);
            snprintf(looked + l, sizeof looked - l, "%s%s", l ? ", " : "", cand);
        }
    }
    return andrea_fail(err, "%s: data folder not found (looked in %s%s%s)", sub, looked[0] ? looked : "nothing: /proc/self/exe unreadable",
                   env ? "; set " : "", env ? env : "");
}
