/* probe_sources.c — the probe sources of one command: --probes (built-in suites and probe files
 * in any mix, comma-separated or repeated) and --texts (a plain text file, one text a line: one
 * map-only suite). See probe.h and docs/probes.md.
 * Lifecycle: init → add / add_texts (option parsing) → keep (read the streams once) → load (once
 * per model) → free. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/checked_size.h"
#include "../common/strict_input.h"
#include "probe.h"
#include "classes.h"
#include "probe_internal.h"

void andrea_probe_sources_init(probe_sources *ps) { memset(ps, 0, sizeof *ps); }

void andrea_probe_sources_free(probe_sources *ps) {
    for (int i = 0; i < ps->n; i++) {
        free(ps->src[i].name);
        free(ps->src[i].bytes);
    }
    memset(ps, 0, sizeof *ps);
}

static int source_push(probe_sources *ps, int kind, const char *name, ae_error *err) {
    for (int i = 0; i < ps->n; i++)
        if (ps->src[i].kind == kind && !strcmp(ps->src[i].name, name))
            return kind == PROBE_SRC_BUILTIN ? andrea_fail(err, "%s: suite named twice", name)
                                             : andrea_fail(err, "%s: %s given twice", name,
                                                           kind == PROBE_SRC_FILE ? "probe file" : "--texts file");
    if (ps->n == PROBE_MAX_SOURCES)
        return andrea_fail(err, "%.200s: more than %d probe sources (suites and files)", name, PROBE_MAX_SOURCES);
    probe_source *s = &ps->src[ps->n];
    memset(s, 0, sizeof *s);
    if (!(s->name = strdup(name))) return andrea_fail(err, "out of memory");
    s->kind = kind;
    ps->n++;
    return 0;
}

/* One piece of a --probes list. */
static int add_piece(probe_sources *ps, const char *piece, const char *arg, ae_error *err) {
    if (!*piece) /* "bos," or "bos,,induction": most likely an unset shell variable ("bos,$X") */
        return andrea_fail(err, "--probes '%.200s' has an empty suite name (an unset variable?): name each suite", arg);
    if (!strcmp(piece, "all")) {
        for (int i = 0; andrea_probe_classes[i].name; i++) {
            int given = 0;
            for (int k = 0; k < ps->n && !given; k++)
                given = ps->src[k].kind == PROBE_SRC_BUILTIN && !strcmp(ps->src[k].name, andrea_probe_classes[i].name);
            if (!given && source_push(ps, PROBE_SRC_BUILTIN, andrea_probe_classes[i].name, err)) return -1;
        }
        return 0;
    }
    if (andrea_probe_is_builtin(piece)) return source_push(ps, PROBE_SRC_BUILTIN, piece, err);
    if (andrea_probe_spec_is_file(piece)) return source_push(ps, PROBE_SRC_FILE, piece, err);
    char list[512] = "";
    for (int i = 0; andrea_probe_classes[i].name; i++) {
        strcat(list, i ? ", " : "");
        strcat(list, andrea_probe_classes[i].name);
    }
    return andrea_fail(err, "%.200s: not a built-in probe suite (built-in: %s, all) nor a probe file (a path with a '/', "
                       "a name ending in .jsonl or .json, or an existing file)", piece, list);
}

int andrea_probe_sources_add(probe_sources *ps, const char *arg, ae_error *err) {
    if (!*arg) return andrea_fail(err, "--probes wants suite names or a probe file, not ''");
    struct stat st;
    /* an existing file is taken whole, so a path holding a comma still names one file */
    if (strchr(arg, ',') && stat(arg, &st) == 0 && (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)))
        return source_push(ps, PROBE_SRC_FILE, arg, err);
    char *list = strdup(arg);
    if (!list) return andrea_fail(err, "out of memory");
    int rc = 0;
    for (char *p = list, *comma; !rc; p = comma + 1) {
        comma = strchr(p, ',');
        if (comma) *comma = 0;
        rc = add_piece(ps, p, arg, err);
        if (!comma) break;
    }
    free(list);
    return rc;
}

int andrea_probe_sources_add_texts(probe_sources *ps, const char *path, ae_error *err) {
    if (!*path) return andrea_fail(err, "--texts wants a file of texts, one a line ('-': standard input), not ''");
    return source_push(ps, PROBE_SRC_TEXTS, path, err);
}

/* All of a --texts file ("-": stdin) into s->bytes: a regular file, a FIFO or stdin, at most
 * PROBE_STREAM_MAX_BYTES. */
static int keep_texts(probe_source *s, ae_error *err) {
    const int is_stdin = !strcmp(s->name, "-");
    FILE *f = is_stdin ? stdin : fopen(s->name, "rb");
    if (!f) return andrea_fail(err, "%s: cannot open the --texts file: %s", s->name, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && (S_ISDIR(st.st_mode) || (!is_stdin && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)))) {
        if (!is_stdin) fclose(f);
        return andrea_fail(err, "%s: %s, not a file of texts", s->name, S_ISDIR(st.st_mode) ? "a folder" : "a device or socket");
    }
    size_t cap = 0, n = 0;
    char *b = NULL;
    int rc = 0;
    for (;;) {
        if (n == cap) {
            size_t want = cap ? 2 * cap : (size_t)1 << 16;
            char *nb = cap < PROBE_STREAM_MAX_BYTES ? realloc(b, want) : NULL;
            if (!nb) {
                rc = cap >= PROBE_STREAM_MAX_BYTES
                         ? andrea_fail(err, "%s: more than %d MiB of texts", s->name, PROBE_STREAM_MAX_BYTES >> 20)
                         : andrea_fail(err, "%s: out of memory reading the texts", s->name);
                break;
            }
            b = nb;
            cap = want;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) rc = andrea_fail(err, "%s: read error", s->name);
            break;
        }
    }
    if (!is_stdin) fclose(f);
    if (rc) {
        free(b);
        return -1;
    }
    s->bytes = b;
    s->len = n;
    return 0;
}

int andrea_probe_sources_keep(probe_sources *ps, int several, ae_error *err) {
    for (int i = 0; i < ps->n; i++) {
        probe_source *s = &ps->src[i];
        if (s->bytes) continue;
        if (s->kind == PROBE_SRC_TEXTS && keep_texts(s, err)) return -1;
        if (s->kind == PROBE_SRC_FILE && several && andrea_probe_file_keep(s->name, &s->bytes, &s->len, err)) return -1;
    }
    return 0;
}

int andrea_probe_sources_files_only(const probe_sources *ps) {
    for (int i = 0; i < ps->n; i++)
        if (ps->src[i].kind != PROBE_SRC_FILE) return 0;
    return ps->n > 0;
}

int andrea_probe_sources_has_builtin(const probe_sources *ps) {
    for (int i = 0; i < ps->n; i++)
        if (ps->src[i].kind == PROBE_SRC_BUILTIN) return 1;
    return ps->n == 0;
}

int andrea_probe_sources_reads(const probe_sources *ps, const char *path) {
    struct stat a, b;
    if (stat(path, &a) != 0 || !S_ISREG(a.st_mode)) return 0;
    for (int i = 0; i < ps->n; i++)
        if (ps->src[i].kind != PROBE_SRC_BUILTIN && strcmp(ps->src[i].name, "-") && stat(ps->src[i].name, &b) == 0 &&
            a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            return ps->src[i].kind;
    return 0;
}

/* The item of one text line (line[0..n), no newline) into it, or -1 with err naming the line. */
static int text_line_item(const char *shown, long line_no, const char *line, size_t n, const andrea_tokenizer *tok,
                          int max_seq_len, size_t longest, probe_item *it, ae_error *err) {
    const char *what = NULL;
    size_t bad;
    if (memchr(line, 0, n)) return andrea_fail(err, "%s:%ld: holds a NUL byte", shown, line_no);
    if ((bad = andrea_utf8_bad_at((const unsigned char *)line, n, &what)) != SIZE_MAX)
        return andrea_fail(err, "%s:%ld: not valid UTF-8 at byte %zu of the line (0x%02X: %s)", shown, line_no, bad + 1,
                           (unsigned char)line[bad], what);
    const int bos = andrea_tokenizer_bos(tok), off = bos >= 0;
    /* a line of more bytes than max_seq_len of the longest tokens has more tokens than that:
     * refused before the encoder's ~40 bytes of memory a byte (a 100 MB line took gigabytes) */
    if (n / longest + off > (size_t)max_seq_len)
        return andrea_fail(err, "%s:%ld: %zu bytes: more tokens%s than the model's max_seq_len %d (no token is longer "
                                "than %zu bytes); one text a line: split it",
                           shown, line_no, n, off ? " with BOS" : "", max_seq_len, longest);
    int *ids = NULL, k = 0;
    if (andrea_tokenizer_encode(tok, line, n, &ids, NULL, &k, err)) return andrea_prefix(err, "%s:%ld", shown, line_no);
    if (k + off > max_seq_len) {
        free(ids);
        return andrea_fail(err, "%s:%ld: %d tokens%s, more than the model's max_seq_len %d (one text a line: split it)",
                           shown, line_no, k + off, off ? " with BOS" : "", max_seq_len);
    }
    memset(it, 0, sizeof *it);
    if (!(it->tokens = malloc((size_t)(k + off) * sizeof *it->tokens))) {
        free(ids);
        return andrea_fail(err, "%s: out of memory", shown);
    }
    if (off) it->tokens[0] = bos;
    memcpy(it->tokens + off, ids, (size_t)k * sizeof *ids);
    it->n_tokens = k + off;
    free(ids);
    return 0;
}

int andrea_probe_texts_load_bytes(const char *path, const char *bytes, size_t len, const andrea_tokenizer *tok,
                                  int max_seq_len, probe_suite *out, ae_error *err) {
    const char *shown = strcmp(path, "-") ? path : "stdin";
    memset(out, 0, sizeof *out);
    if (!tok) return andrea_fail(err, "%s: --texts needs the model's tokenizer (none was found; give --tokenizer DIR)", shown);
    snprintf(out->name, sizeof out->name, "%s", PROBE_TEXTS_SUITE);
    snprintf(out->source, sizeof out->source, "%s", path);
    out->map_only = 1;
    size_t cap = 0, longest = 1;
    long line_no = 0;
    char tb[ANDREA_TOKEN_MAX_BYTES];
    for (int id = 0; id < andrea_tokenizer_vocab_size(tok); id++) {
        const int nb = andrea_tokenizer_token_bytes(tok, id, tb, sizeof tb);
        if (nb > 0 && (size_t)nb > longest) longest = (size_t)nb;
    }
    /* an editor's byte-order mark would be three tokens at the start of the first text, as probe
     * files and vocab.json refuse it */
    if (len >= 3 && !memcmp(bytes, "\xEF\xBB\xBF", 3))
        return andrea_fail(err, "%s: starts with a UTF-8 byte-order mark (EF BB BF), which would be the first text's first "
                                "tokens: save it without one", shown);
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(bytes + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (bytes + at)) : len - at;
        const char *line = bytes + at;
        at += n + (nl != NULL);
        line_no++;
        if (n > 0 && line[n - 1] == '\r') n--; /* CRLF */
        size_t k = 0;
        while (k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r' || line[k] == '\f' || line[k] == '\v')) k++;
        if (k == n) continue; /* blank lines separate nothing: skipped */
        if (out->n_items >= PROBE_MAX_ITEMS) {
            andrea_probe_suite_free(out);
            return andrea_fail(err, "%s: more than %d texts", shown, PROBE_MAX_ITEMS);
        }
        probe_item it;
        if (andrea_grow(&out->items, &cap, (size_t)out->n_items + 1, sizeof *out->items, 64)) {
            andrea_probe_suite_free(out);
            return andrea_fail(err, "%s: out of memory", shown);
        }
        if (text_line_item(shown, line_no, line, n, tok, max_seq_len, longest, &it, err)) {
            andrea_probe_suite_free(out);
            return -1;
        }
        out->items[out->n_items++] = it;
        if (it.n_tokens > out->max_len) out->max_len = it.n_tokens;
    }
    if (out->n_items == 0) {
        andrea_probe_suite_free(out);
        return andrea_fail(err, "%s: %s: --texts wants one text a line", shown, len ? "no text, only blank lines" : "empty");
    }
    return 0;
}

/* Appends n suites (taken over: *add freed, its suites moved) to *all. */
static int suites_append(probe_suite **all, int *n_all, size_t *cap, probe_suite *add, int n, ae_error *err) {
    if (andrea_grow(all, cap, (size_t)*n_all + (size_t)n, sizeof **all, 8)) {
        andrea_probe_suites_free(add, n);
        return andrea_fail(err, "out of memory");
    }
    memcpy(*all + *n_all, add, (size_t)n * sizeof *add);
    *n_all += n;
    free(add);
    return 0;
}

/* The suites of one source for a model. */
static int source_load(const probe_source *s, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                       const probe_options *opt, probe_suite **out, int *n, ae_error *err) {
    *out = NULL;
    *n = 0;
    if (s->kind == PROBE_SRC_FILE)
        return s->bytes ? andrea_probe_file_load_bytes(s->name, s->bytes, s->len, tok, vocab_size, max_seq_len, out, n, err)
                        : andrea_probe_file_load(s->name, tok, vocab_size, max_seq_len, out, n, err);
    if (!(*out = calloc(1, sizeof **out))) return andrea_fail(err, "out of memory");
    int rc;
    if (s->kind == PROBE_SRC_BUILTIN)
        rc = andrea_probe_suite_builtin(s->name, tok, vocab_size, max_seq_len, opt, *out, err);
    else if (!s->bytes)
        rc = andrea_fail(err, "%s: the --texts file was not read (andrea_probe_sources_keep)", s->name);
    else
        rc = andrea_probe_texts_load_bytes(s->name, s->bytes, s->len, tok, max_seq_len, *out, err);
    if (rc) {
        free(*out);
        *out = NULL;
        return -1;
    }
    *n = 1;
    return 0;
}

/* Where a suite came from, for a message: "the built-in suites" or its file. */
static const char *suite_origin(const probe_suite *s) {
    return !strcmp(s->source, "builtin") ? "the built-in suites" : !strcmp(s->source, "-") ? "stdin" : s->source;
}

int andrea_probe_sources_load(const probe_sources *ps, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                              const probe_options *opt, probe_suite **suites, int *n_suites, ae_error *err) {
    *suites = NULL;
    *n_suites = 0;
    if (ps->n == 0) return andrea_probe_suites_builtin_list(NULL, tok, vocab_size, max_seq_len, opt, suites, n_suites, err);
    probe_suite *all = NULL;
    size_t cap = 0;
    int n_all = 0;
    for (int i = 0; i < ps->n; i++) {
        probe_suite *one;
        int n;
        if (source_load(&ps->src[i], tok, vocab_size, max_seq_len, opt, &one, &n, err) ||
            suites_append(&all, &n_all, &cap, one, n, err)) {
            andrea_probe_suites_free(all, n_all);
            return -1;
        }
    }
    /* one name, one suite: two sources of one name would be one HDF5 group and one class */
    for (int i = 0; i < n_all; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(all[i].name, all[j].name)) {
                andrea_fail(err, "suite \"%s\" comes from both %.1000s and %.1000s: give each suite name once", all[i].name,
                            suite_origin(&all[j]), suite_origin(&all[i]));
                andrea_probe_suites_free(all, n_all);
                return -1;
            }
    *suites = all;
    *n_suites = n_all;
    return 0;
}
