/* checkpoint_step.c — the training step of a checkpoint (see checkpoint_step.h). */
#include "checkpoint_step.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../common/strict_input.h"

/* The bytes of file (a regular file of at most ANDREA_TRAINER_STATE_MAX bytes), NUL-terminated;
 * NULL with err. */
static char *read_state(const char *file, size_t *len, ae_error *err) {
    FILE *f = andrea_fopen_regular(file, err); /* a FIFO or folder is refused, never waited on */
    if (!f) return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fileno(f), &st) != 0)
        andrea_fail(err, "%s: cannot stat: %s", file, strerror(errno));
    else if ((unsigned long long)st.st_size > ANDREA_TRAINER_STATE_MAX)
        andrea_fail(err, "%s: %lld bytes, too large for a trainer_state.json (limit %u)", file, (long long)st.st_size,
                    ANDREA_TRAINER_STATE_MAX);
    else if (!(buf = malloc((size_t)st.st_size + 1)))
        andrea_fail(err, "%s: out of memory", file);
    else if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        andrea_fail(err, "%s: read error", file);
        free(buf);
        buf = NULL;
    } else {
        buf[st.st_size] = 0;
        *len = (size_t)st.st_size;
    }
    fclose(f);
    return buf;
}

/* What a global_step that is not a step is, for the message. */
static const char *what_it_is(const cJSON *g) {
    if (!cJSON_IsNumber(g)) return cJSON_IsString(g) ? "a string" : cJSON_IsBool(g) ? "true or false" : "not a number";
    if (g->valuedouble < 0 || (g->valuedouble == 0 && signbit(g->valuedouble))) return "negative";
    if (g->valuedouble >= 9007199254740992.0) return "2^53 or more";
    return "written with a '.' or an exponent";
}

/* global_step of the trainer_state.json file: 1 with *step, 0 when absent or null, -1 (err). */
static int global_step(const char *file, long long *step, ae_error *err) {
    size_t len = 0;
    char *text = read_state(file, &len, err);
    if (!text) return -1;
    char why[256];
    cJSON *root = andrea_json_parse_strict(text, len, 1, NULL, why, sizeof why);
    free(text);
    if (!root) return andrea_fail(err, "%s: %s", file, why);
    int rc = 0;
    const cJSON *g = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "global_step") : NULL;
    if (!cJSON_IsObject(root))
        rc = andrea_fail(err, "%s: not a JSON object (a Trainer's trainer_state.json is one)", file);
    else if (g && !cJSON_IsNull(g) && (!andrea_json_is_digits_only(g) || g->valuedouble >= 9007199254740992.0))
        rc = andrea_fail(err, "%s: \"global_step\" must be a non-negative integer written as digits (it is %s): fix the "
                              "file or remove it (the step then comes from the folder's name)",
                         file, what_it_is(g));
    else if (g && !cJSON_IsNull(g)) {
        *step = (long long)g->valuedouble;
        rc = 1;
    }
    cJSON_Delete(root);
    return rc;
}

int andrea_checkpoint_step(const char *path, long long *step, char *note, size_t cap, ae_error *err) {
    if (note && cap) note[0] = 0;
    long long named = 0, from_state = 0;
    const int has_name = andrea_step_from_name(path, &named);
    struct stat st;
    char file[4200];
    int has_state = 0;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t n = strlen(path);
        while (n > 1 && path[n - 1] == '/') n--;
        if (snprintf(file, sizeof file, "%.*s/trainer_state.json", (int)n, path) >= (int)sizeof file)
            return andrea_fail(err, "%s: path too long", path);
        if (lstat(file, &st) == 0 || errno != ENOENT) /* a link that leads nowhere is refused, not skipped */
            has_state = global_step(file, &from_state, err);
    }
    if (has_state < 0) return -1;
    if (has_state && has_name && named != from_state && note && cap)
        snprintf(note, cap, "%s: trainer_state.json's global_step %lld differs from the step %lld of its name; step %lld is used",
                 path, from_state, named, from_state);
    if (has_state) *step = from_state;
    else if (has_name) *step = named;
    return has_state || has_name;
}

/* The digits of a step at d (after its word and an optional '-' or '_'): 1 and *v when they are a
 * whole number of at most 15 digits; digits that go on as a number in another notation
 * ("step3e3", "step100k", "step1.5") are not its step: 3, 100 or 1 would be a wrong step, where
 * none asks for --step N. */
static int step_digits(const char *d, long long *v) {
    if (*d == '-' || *d == '_') d++;
    if (!isdigit((unsigned char)*d)) return 0;
    char *end;
    errno = 0;
    *v = strtoll(d, &end, 10);
    /* below 2^53, as trainer_state.json's global_step: past it a double (the series' x axis,
     * SQLite's REAL) no longer holds each step; a longer number is no step count */
    if (errno || end - d > 16 || *v >= (1LL << 53)) return 0;
    return !(isalnum((unsigned char)*end) || (*end == '.' && isdigit((unsigned char)end[1])));
}

void andrea_checkpoint_base_name(const char *path, char *out, size_t cap) {
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/') b--;
    snprintf(out, cap, "%.*s", (int)(n - b), path + b);
}

int andrea_step_from_name(const char *path, long long *step) {
    char base[1024];
    andrea_checkpoint_base_name(path, base, sizeof base);
    int found = 0;
    for (const char *p = base; *p; p++) {
        long long v;
        const int word_start = p == base || !isalnum((unsigned char)p[-1]);
        /* "step" anywhere ("Step300", "run_step5"); "iter" and "checkpoint" (Hugging Face Trainer's
         * checkpoint-N) where a word begins, so "twitter5" has no step */
        const int len = !strncasecmp(p, "step", 4)                          ? 4
                        : word_start && !strncasecmp(p, "iter", 4)          ? 4
                        : word_start && !strncasecmp(p, "checkpoint", 10) ? 10
                                                                            : 0;
        if (len && step_digits(p + len, &v)) {
            *step = v;
            found = 1;
        }
    }
    return found;
}

int andrea_is_step_name(const char *stem) {
    long long v;
    static const char *const words[] = {"checkpoint", "step", "iter"};
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        const size_t l = strlen(words[w]);
        if (strncasecmp(stem, words[w], l)) continue;
        const char *d = stem + l + (stem[l] == '-' || stem[l] == '_');
        return step_digits(stem + l, &v) && d[strspn(d, "0123456789")] == 0;
    }
    return 0;
}
