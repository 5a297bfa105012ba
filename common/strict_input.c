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
    long control;     /* offset of the first control byte (< 0x20) inside a string, or outside one
                       * other than JSON's whitespace (space, tab, LF, CR), or -1: cJSON copies the
                       * first into the string and skips the second as whitespace */
    int control_in_string;
} json_scan;

static int json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static json_scan scan_json(const char *s, size_t len) {
    json_scan r = {1, -1, -1, -1, -1, 0};
    int in_string = 0;
    long depth = 0;
    for (size_t i = 0; i < len; i++) {
        const char c = s[i];
        if ((unsigned char)c < 0x20 && r.control < 0 && (in_string || !json_space(c))) {
            r.control = (long)i;
            r.control_in_string = in_string;
        }
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

/* Offset of the first byte of s[0..len) that does not begin a well-formed UTF-8 sequence (RFC
 * 3629: shortest form, no surrogate, nothing past U+10FFFF, nothing cut short), or SIZE_MAX, with
 * *what naming the fault. Python's json decodes the text first and serde_json reads a &str, so
 * both refuse such text; cJSON copies the bytes into its strings as they are. */
size_t andrea_utf8_bad_at(const unsigned char *s, size_t len, const char **what) {
    size_t i = 0;
    while (i < len) {
        const unsigned c = s[i];
        size_t n = 1;
        unsigned lo = 0x80, hi = 0xBF; /* the range of the second byte */
        const char *low = "an overlong encoding", *high = NULL;
        if (c < 0x80) n = 1;
        else if (c >= 0xC2 && c <= 0xDF) n = 2;
        else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        else {
            *what = c < 0xC0 ? "a continuation byte where a character should start"
                    : c < 0xC2 ? "an overlong encoding" : "a byte UTF-8 never uses";
            return i;
        }
        if (c == 0xED) high = "a surrogate (U+D800..U+DFFF) encoded in UTF-8";
        if (c == 0xF4) high = "a code point above U+10FFFF";
        for (size_t k = 1; k < n; k++) {
            const unsigned b = i + k < len ? s[i + k] : 0;
            const unsigned l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
            if (b >= 0x80 && b <= 0xBF && (b < l || b > h)) {
                *what = b < l ? low : high;
                return i;
            }
            if (b < 0x80 || b > 0xBF) {
                *what = "a sequence cut short";
                return i;
            }
        }
        i += n;
    }
    return SIZE_MAX;
}

/* The refusals that need no tree: checked first, so cJSON never sees such a text. Returns 0, or
 * -1 with why set. */
static int refuse_before_parse(const char *text, size_t len, const json_scan *scan, char *why, size_t cap) {
    const char *nul = memchr(text, 0, len);
    if (nul) {
        snprintf(why, cap, "holds a NUL byte at byte %zu", (size_t)(nul - text));
        return -1;
    }
    /* cJSON skips it; Python's json.loads and serde_json refuse it */
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
        snprintf(why, cap, "starts with a UTF-8 byte order mark (JSON text must not; save it without one)");
        return -1;
    }
    const char *what = NULL;
    const size_t bad = andrea_utf8_bad_at((const unsigned char *)text, len, &what);
    if (bad != SIZE_MAX) {
        snprintf(why, cap, "not valid UTF-8 at byte %zu (0x%02X: %s)", bad, (unsigned char)text[bad], what);
        return -1;
    }
    if (scan->values > ANDREA_JSON_MAX_VALUES) {
        snprintf(why, cap, "holds %zu JSON values, more than the %d andrea reads (a checkpoint header, config or "
                 "tokenizer holds far fewer)", scan->values, ANDREA_JSON_MAX_VALUES);
        return -1;
    }
    if (scan->too_deep >= 0) {
        snprintf(why, cap, "JSON nested deeper than %d levels (at byte %ld), more than andrea reads", CJSON_NESTING_LIMIT,
                 scan->too_deep);
        return -1;
    }
    return 0;
}

/* The refusals of a text cJSON parsed (the scan reads strings and numbers right only then):
 * numbers JSON does not allow, a \u0000 escape, a raw control character. Returns 0 or -1. */
static int refuse_after_parse(const char *text, const json_scan *scan, char *why, size_t cap) {
    if (scan->bad_number >= 0) {
        snprintf(why, cap, "not valid JSON (a number at byte %ld is not a JSON number: no leading zeros, digits on "
                 "both sides of a '.')", scan->bad_number);
        return -1;
    }
    if (scan->nul_escape >= 0) {
        snprintf(why, cap, "a string holds the escape \\u0000 (a NUL character) at byte %ld", scan->nul_escape);
        return -1;
    }
    if (scan->control >= 0) {
        const unsigned char c = (unsigned char)text[scan->control];
        if (scan->control_in_string)
            snprintf(why, cap, "a raw control character (byte 0x%02X) at byte %ld inside a string (JSON writes it "
                     "escaped: \\n, \\t, \\u00%02x)", c, scan->control, c);
        else
            snprintf(why, cap, "a control character (byte 0x%02X) at byte %ld outside any string (JSON's whitespace "
                     "is space, tab, LF, CR)", c, scan->control);
        return -1;
    }
    return 0;
}

/* The start of the next number at or after s[i] outside strings (its end in *end), or len. Only
 * for a text cJSON parsed: outside strings a '-' or a digit then always begins a number. */
static size_t next_number(const char *s, size_t len, size_t i, size_t *end) {
    for (; i < len; i++) {
        if (s[i] == '"') {
            for (i++; i < len && s[i] != '"'; i++)
                if (s[i] == '\\') i++;
        } else if (s[i] == '-' || (s[i] >= '0' && s[i] <= '9')) {
            *end = json_number_end(s, len, i);
            return i;
        }
    }
    return len;
}

/* Marks each number of the tree (pre-order, which is text order) whose text is digits only with
 * ANDREA_JSON_DIGITS_ONLY; *at walks the text along. Depth bounded by cJSON's nesting limit. */
static void tag_numbers(cJSON *node, const char *s, size_t len, size_t *at) {
    if (cJSON_IsNumber(node)) {
        size_t end = 0, b = next_number(s, len, *at, &end);
        if (b >= len || end <= b) return;
        size_t k = b;
        while (k < end && s[k] >= '0' && s[k] <= '9') k++;
        if (k == end) node->type |= ANDREA_JSON_DIGITS_ONLY;
        *at = end;
        return;
    }
    for (cJSON *c = node->child; c; c = c->next) tag_numbers(c, s, len, at);
}

/* "key \"K\" is given twice" for the first key given twice in the tree (check_dups), or 0. */
static int refuse_dup_key(const cJSON *root, char *why, size_t cap) {
    int oom = 0;
    const char *d = dup_key(root, &oom);
    if (oom) {
        snprintf(why, cap, "out of memory checking keys");
        return -1;
    }
    if (!d) return 0;
    /* the key is shown printable and short: it comes from the file */
    char shown[48];
    size_t k = 0, n = strlen(d);
    for (; k < n && k + 4 < sizeof shown; k++) shown[k] = d[k] >= 0x20 && d[k] < 0x7f ? d[k] : '?';
    if (k < n) memcpy(shown + k, "...", 3), k += 3;
    shown[k] = 0;
    snprintf(why, cap, "key \"%s\" is given twice", shown);
    return -1;
}

cJSON *andrea_json_parse_strict(const char *text, size_t len, int check_dups, size_t *syntax_at, char *why,
                                size_t cap) {
    if (syntax_at) *syntax_at = SIZE_MAX;
    const json_scan scan = scan_json(text, len);
    if (refuse_before_parse(text, len, &scan, why, cap)) return NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        snprintf(why, cap, "not valid JSON (near byte %zu)", at);
        if (syntax_at) *syntax_at = at;
        return NULL;
    }
    size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
    while (at < len && json_space(text[at])) at++;
    if (at < len) {
        snprintf(why, cap, "unexpected data after the JSON value (at byte %zu)", at);
        cJSON_Delete(root);
        return NULL;
    }
    if (refuse_after_parse(text, &scan, why, cap) || (check_dups && refuse_dup_key(root, why, cap))) {
        cJSON_Delete(root);
        return NULL;
    }
    size_t cursor = 0;
    tag_numbers(root, text, len, &cursor);
    return root;
}
