/* strict_input.c — regular-file open and strict JSON parsing for outside files (see
 * strict_input.h for why each check exists). */
#include "strict_input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int andrea_open_regular(const char *path, ae_error *err) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return andrea_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return andrea_fail(err, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return andrea_fail(err, "%s: not a regular file (%s)", path,
                       S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket");
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int e = errno;
        close(fd);
        return andrea_fail(err, "%s: cannot open: %s", path, strerror(e));
    }
    return fd;
}

FILE *andrea_fopen_regular(const char *path, ae_error *err) {
    int fd = andrea_open_regular(path, err);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        andrea_fail(err, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* First key given twice in any object under node (depth bounded by cJSON's nesting limit), or
 * NULL; *oom set when the scratch array could not be allocated. */
static const char *dup_key(const cJSON *node, int *oom) {
    if (cJSON_IsObject(node) && node->child && node->child->next) {
        size_t n = 0;
        for (const cJSON *c = node->child; c; c = c->next) n++;
        const char **names = malloc(n * sizeof *names);
        if (!names) {
            *oom = 1;
            return NULL;
        }
        n = 0;
        for (const cJSON *c = node->child; c; c = c->next) names[n++] = c->string;
        qsort(names, n, sizeof *names, by_name);
        const char *dup = NULL;
        for (size_t i = 1; i < n && !dup; i++)
            if (!strcmp(names[i - 1], names[i])) dup = names[i];
        free(names);
        if (dup) return dup;
    }
    if (cJSON_IsObject(node) || cJSON_IsArray(node))
        for (const cJSON *c = node->child; c; c = c->next) {
            const char *d = dup_key(c, oom);
            if (d || *oom) return d;
        }
    return NULL;
}

/* The end of the JSON number at s[i] (RFC 8259: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?),
 * or 0 when it is not one: cJSON also reads "02", "2." and ".5", which Python's json refuses. */
static size_t json_number_end(const char *s, size_t len, size_t i) {
#define DIGIT(k) ((k) < len && s[k] >= '0' && s[k] <= '9')
    if (i < len && s[i] == '-') i++;
    if (!DIGIT(i)) return 0;
    if (s[i] == '0') i++;
    else
        while (DIGIT(i)) i++;
    if (i < len && s[i] == '.') {
        if (!DIGIT(i + 1)) return 0;
        i++;
        while (DIGIT(i)) i++;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-')) i++;
        if (!DIGIT(i)) return 0;
        while (DIGIT(i)) i++;
    }
    if (DIGIT(i) || (i < len && (s[i] == '.' || s[i] == 'e' || s[i] == 'E'))) return 0; /* "02", "1.2.3" */
    return i;
#undef DIGIT
}

/* What one walk over the text finds, outside and inside its strings. */
typedef struct {
    size_t values;    /* values it holds at most: one per ',' '[' '{' outside strings, plus one. cJSON
                       * builds a node of ~100 bytes (malloc's overhead included) for each, about 40
                       * times the text for "[0,0,...]": counted first, so the tree's memory is
                       * bounded before any of it exists */
    long bad_number;  /* offset of the first number outside strings that is not a JSON number, or -1 */
    long nul_escape;  /* offset of the first \u0000 escape inside a string, or -1 */
    long too_deep;    /* offset of the first '[' or '{' nested deeper than cJSON parses
                       * (CJSON_NESTING_LIMIT), or -1: cJSON only says the text does not parse */
} json_scan;

static json_scan scan_json(const char *s, size_t len) {
    json_scan r = {1, -1, -1, -1};
    int in_string = 0;
    long depth = 0;
    for (size_t i = 0; i < len; i++) {
        const char c = s[i];
        if (in_string) {
            if (c == '"') {
                in_string = 0;
            } else if (c == '\\' && i + 1 < len) {
                if (r.nul_escape < 0 && s[i + 1] == 'u' && i + 5 < len && !memcmp(s + i + 2, "0000", 4))
                    r.nul_escape = (long)i;
                i++; /* the escaped character */
            }
        } else if (c == '"') {
            in_string = 1;
        } else if (c == ',' || c == '[' || c == '{') {
            r.values++;
            if (c != ',' && ++depth > CJSON_NESTING_LIMIT && r.too_deep < 0) r.too_deep = (long)i;
        } else if (c == ']' || c == '}') {
            depth--;
        } else if (c == '-' || c == '.' || (c >= '0' && c <= '9')) {
            const size_t end = json_number_end(s, len, i);
            if (!end && r.bad_number < 0) r.bad_number = (long)i;
            if (end) i = end - 1;
        }
    }
    return r;
}

cJSON *andrea_json_parse_strict(const char *text, size_t len, int check_dups, size_t *syntax_at, char *why,
                                size_t cap) {
    if (syntax_at) *syntax_at = SIZE_MAX;
    const char *nul = memchr(text, 0, len);
    if (nul) {
        snprintf(why, cap, "holds a NUL byte at byte %zu", (size_t)(nul - text));
        return NULL;
    }
    const json_scan scan = scan_json(text, len);
    if (scan.values > ANDREA_JSON_MAX_VALUES) {
        snprintf(why, cap, "holds %zu JSON values, more than the %d andrea reads (a checkpoint header, config or "
                 "tokenizer holds far fewer)", scan.values, ANDREA_JSON_MAX_VALUES);
        return NULL;
    }
    if (scan.too_deep >= 0) {
        snprintf(why, cap, "JSON nested deeper than %d levels (at byte %ld), more than andrea reads", CJSON_NESTING_LIMIT,
                 scan.too_deep);
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        snprintf(why, cap, "not valid JSON (near byte %zu)", at);
        if (syntax_at) *syntax_at = at;
        return NULL;
    }
    size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
    while (at < len && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r')) at++;
    if (at < len) {
        snprintf(why, cap, "unexpected data after the JSON value (at byte %zu)", at);
        cJSON_Delete(root);
        return NULL;
    }
    if (scan.bad_number >= 0) {
        snprintf(why, cap, "not valid JSON (a number at byte %ld is not a JSON number: no leading zeros, digits on "
                 "both sides of a '.')", scan.bad_number);
        cJSON_Delete(root);
        return NULL;
    }
    if (scan.nul_escape >= 0) {
        snprintf(why, cap, "a string holds the escape \\u0000 (a NUL character) at byte %ld", scan.nul_escape);
        cJSON_Delete(root);
        return NULL;
    }
    if (check_dups) {
        int oom = 0;
        const char *d = dup_key(root, &oom);
        if (d || oom) {
            if (oom) {
                snprintf(why, cap, "out of memory checking keys");
            } else {
                /* the key is shown printable and short: it comes from the file */
                char shown[48];
                size_t k = 0, n = strlen(d);
                for (; k < n && k + 4 < sizeof shown; k++) shown[k] = d[k] >= 0x20 && d[k] < 0x7f ? d[k] : '?';
                if (k < n) memcpy(shown + k, "...", 3), k += 3;
                shown[k] = 0;
                snprintf(why, cap, "key \"%s\" is given twice", shown);
            }
            cJSON_Delete(root);
            return NULL;
        }
    }
    return root;
}
