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

/* The paths one lookup builds, on the heap: 36 KB on the stack made the first stack growth of a
 * run happen here, which under a tight address-space limit (ulimit -v) was a SIGSEGV instead of
 * a failed allocation (issue 43, 7). */
typedef struct {
    char bin[4096], cand[4096], dir[4096], src[4096], marker[4096];
    char looked[2 * 4096 + 64];
} lookup;

/* The source folder named by the build-tree marker in dir, or -1. */
static int read_marker(lookup *k, const char *dir, char *out, size_t n) {
    if ((size_t)snprintf(k->marker, sizeof k->marker, "%s/%s", dir, ANDREA_BUILD_TREE_MARKER) >= sizeof k->marker) return -1;
    FILE *f = fopen(k->marker, "r");
    if (!f) return -1;
    char *got = fgets(out, (int)n, f);
    fclose(f);
    if (!got) return -1;
    out[strcspn(out, "\r\n")] = 0;
    return out[0] ? 0 : -1;
}

/* Cases 2 and 3 of data_path.h: 0 with out filled, 1 when not found (k->looked says where). */
static int look_beside_binary(lookup *k, const char *sub, char *out, size_t n) {
    if (exe_dir(k->bin, sizeof k->bin) != 0) return 1;
    /* 2. an install: PREFIX/bin/andrea -> PREFIX/share/andrea/SUB */
    char *prefix = NULL;
    if ((size_t)snprintf(k->cand, sizeof k->cand, "%s/..", k->bin) < sizeof k->cand) prefix = realpath(k->cand, NULL);
    if ((size_t)snprintf(k->cand, sizeof k->cand, "%s/share/andrea/%s", prefix ? prefix : k->bin, sub) < sizeof k->cand) {
        if (is_dir(k->cand) && strlen(k->cand) < n) {
            memcpy(out, k->cand, strlen(k->cand) + 1);
            free(prefix);
            return 0;
        }
        snprintf(k->looked, sizeof k->looked, "%s", k->cand);
    }
    free(prefix);
    /* 3. the build tree: the marker next to the binary, or one or two folders up (build/tests,
     * build/tests/fuzz) */
    for (int up = 0; up < 3; up++) {
        if ((size_t)snprintf(k->dir, sizeof k->dir, "%s%s", k->bin, up == 2 ? "/../.." : up ? "/.." : "") >= sizeof k->dir)
            continue;
        if (read_marker(k, k->dir, k->src, sizeof k->src)) continue;
        if ((size_t)snprintf(k->cand, sizeof k->cand, "%s/%s", k->src, sub) >= sizeof k->cand) continue;
        if (is_dir(k->cand) && strlen(k->cand) < n) {
            memcpy(out, k->cand, strlen(k->cand) + 1);
            return 0;
        }
        size_t l = strlen(k->looked);
        snprintf(k->looked + l, sizeof k->looked - l, "%s%s", l ? ", " : "", k->cand);
    }
    return 1;
}

int andrea_data_dir(const char *sub, const char *env, char *out, size_t n, ae_error *err) {
    const char *v = env ? getenv(env) : NULL;
    if (v && *v) {
        if (strlen(v) >= n) return andrea_fail(err, "%s: %s is too long", v, env);
        memcpy(out, v, strlen(v) + 1);
        return 0;
    }
    lookup *k = calloc(1, sizeof *k);
    if (!k) return andrea_fail(err, "%s: out of memory looking for the data folder", sub);
    if (look_beside_binary(k, sub, out, n) == 0) {
        free(k);
        return 0;
    }
    andrea_fail(err, "%s: data folder not found (looked in %s%s%s)", sub,
                k->looked[0] ? k->looked : "nothing: /proc/self/exe unreadable", env ? "; set " : "", env ? env : "");
    free(k);
    return -1;
}
