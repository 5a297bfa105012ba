/* probe_file.c — user probe files: JSON Lines, one item a line (docs/probes.md).
 *
 * Job: parse {"suite", "text"|"tokens", "targets"?, "entities"?} lines with cJSON, tokenize
 * texts, validate everything against the model (ids < vocab_size, 1 <= length <= max_seq_len,
 * key <= query < length, 0 <= start < end <= length), fill the suite's built-in target rule where
 * a line has no "targets", and group items by suite in order of first appearance.
 * Invariants: a line is at most PROBE_FILE_MAX_LINE bytes (read with a bounded buffer, never
 * slurped); suite names are [A-Za-z0-9_-]{1,63} because they become HDF5 group names.
 * Failure contract: every malformed line is reported in the one error message as
 * "FILE:LINE: problem; FILE:LINE: problem; ..." (as many as fit, then a count); nothing is
 * returned when any line is bad.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/checked_size.h"
#include "../common/strict_input.h"
#include "probe_internal.h"

typedef struct {
    probe_suite *arr;
    int n;
    size_t cap;
} suite_list;

/* Collects the problems of every bad line into one message. */
typedef struct {
    char msg[AE_ERROR_MAX];
    size_t len;
    int n_bad;
    int truncated;
    int unread; /* reading stopped at PROBE_FILE_MAX_BAD_LINES bad lines */
} problems;

static void problem_add(problems *p, const char *path, long line, const char *what) {
    p->n_bad++;
    if (p->truncated) return;
    char one[AE_ERROR_MAX];
    snprintf(one, sizeof one, "%s%s:%ld: %s", p->len ? "; " : "", path, line, what);
    size_t n = strlen(one);
    /* `what` may quote the file (an unknown key): a control byte from it ("\r", or "\n" written
     * as \u000a) must not split or overwrite the one-line message (found by fuzz_probe_jsonl) */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)one[i] < 0x20 || one[i] == 0x7f) one[i] = '?';
    /* keep room for the closing "(N malformed lines)" */
    if (p->len + n + 48 >= sizeof p->msg) {
        p->truncated = 1;
        if (p->len == 0) { /* the first problem is always reported, shortened if need be */
            n = sizeof p->msg - 48;
            one[n] = 0;
        } else {
            return;
        }
    }
    memcpy(p->msg + p->len, one, n + 1);
    p->len += n;
}

int andrea_probe_suite_name_valid(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > 63) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-') return 0;
    return 1;
}

/* An integer-valued JSON number within [lo, hi]. */
static int json_int(const cJSON *v, long lo, long hi, int *out) {
    if (!andrea_json_is_digits_only(v)) return -1; /* 1.0 and 2e0 are floats to every other reader */
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi) return -1;
    *out = (int)d;
    return 0;
}

static probe_suite *suite_for(suite_list *L, const char *name, const char *path, ae_error *err) {
    for (int i = 0; i < L->n; i++)
        if (!strcmp(L->arr[i].name, name)) return &L->arr[i];
    if (L->n >= PROBE_MAX_SUITES) {
        andrea_fail(err, "%s: more than %d suites (\"%s\" would be suite %d)", path, PROBE_MAX_SUITES, name,
                L->n + 1); /* names are [A-Za-z0-9_-]: safe to show */
        return NULL;
    }
    if (andrea_grow(&L->arr, &L->cap, (size_t)L->n + 1, sizeof *L->arr, 8)) {
        andrea_fail(err, "%s: out of memory", path);
        return NULL;
    }
    probe_suite *s = &L->arr[L->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->source, sizeof s->source, "%s", path);
    return s;
}

static int suite_append(probe_suite *s, probe_item *it, ae_error *err) {
    if (s->n_items >= PROBE_MAX_ITEMS) return andrea_fail(err, "more than %d items in suite %s", PROBE_MAX_ITEMS, s->name);
    probe_item *p = realloc(s->items, (size_t)(s->n_items + 1) * sizeof *p);
    if (!p) return andrea_fail(err, "out of memory");
    s->items = p;
    s->items[s->n_items++] = *it;
    if (it->n_tokens > s->max_len) s->max_len = it->n_tokens;
    return 0;
}

static void item_clear(probe_item *it) {
    free(it->tokens);
    free(it->targets);
    free(it->entities);
    memset(it, 0, sizeof *it);
}

/* A "text" item's tokens into it: the text tokenized, after bos (-1: none). 0, or -1 with why. */
static int text_tokens(const cJSON *jtext, const andrea_tokenizer *tok, int bos, int max_seq_len, probe_item *it,
                       char *why, size_t why_cap) {
    const int off = bos >= 0;
    ae_error e;
    if (!cJSON_IsString(jtext)) return snprintf(why, why_cap, "\"text\" must be a string"), -1;
    if (!tok)
        return snprintf(why, why_cap, "a \"text\" item needs a tokenizer (none was found for this model; use \"tokens\" or "
                                      "--tokenizer DIR)"), -1;
    size_t tl = strlen(jtext->valuestring);
    if (tl == 0) return snprintf(why, why_cap, "\"text\" is empty"), -1;
    int *ids = NULL, *offs = NULL, n = 0;
    if (andrea_tokenizer_encode(tok, jtext->valuestring, tl, &ids, &offs, &n, &e))
        return snprintf(why, why_cap, "%.500s", e.msg), -1;
    free(offs);
    if (n < 1 || n + off > max_seq_len) {
        free(ids);
        if (n < 1) return snprintf(why, why_cap, "\"text\" tokenizes to nothing"), -1;
        return snprintf(why, why_cap, "\"text\" is %d tokens%s, more than the model's max_seq_len %d", n + off,
                        off ? " with BOS" : "", max_seq_len), -1;
    }
    if (off) {
        int *with = realloc(ids, (size_t)(n + 1) * sizeof *with);
        if (!with) {
            free(ids);
            return snprintf(why, why_cap, "out of memory"), -1;
        }
        memmove(with + 1, with, (size_t)n * sizeof *with);
        with[0] = bos;
        ids = with;
    }
    it->tokens = ids;
    it->n_tokens = n + off;
    return 0;
}

/* Parses one line into *it and its suite name. Returns 0, or -1 with why in `why`. */
static int parse_line(const char *line, size_t len, const andrea_tokenizer *tok, int vocab_size,
                      int max_seq_len, char suite[64], probe_item *it, char *why, size_t why_cap) {
    memset(it, 0, sizeof *it);
    /* strict (common/strict_input.h): a second object after the first ("{..} {..}": an
     * item silently dropped), a key given twice (cJSON would answer the first, a Python writer
     * meant the last) and "\u0000" in a text (cJSON's string would end there) are refused */
    char jwhy[160];
    cJSON *j = andrea_json_parse_strict(line, len, 1, NULL, jwhy, sizeof jwhy);
    int rc = -1;
    ae_error e;
#define BAD(...)                                  \
    do {                                          \
        snprintf(why, why_cap, __VA_ARGS__);      \
        goto done;                                \
    } while (0)
    if (!j) BAD("%s", jwhy);
    if (!cJSON_IsObject(j)) BAD("not a JSON object");
    for (const cJSON *k = j->child; k; k = k->next) {
        if (strcmp(k->string, "suite") && strcmp(k->string, "text") && strcmp(k->string, "tokens") &&
            strcmp(k->string, "targets") && strcmp(k->string, "entities") && strcmp(k->string, "bos"))
            BAD("unknown key \"%.40s\" (allowed: suite, text, tokens, targets, entities, bos)", k->string);
    }
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(j, "suite");
    const cJSON *jtext = cJSON_GetObjectItemCaseSensitive(j, "text");
    const cJSON *jtok = cJSON_GetObjectItemCaseSensitive(j, "tokens");
    const cJSON *jtar = cJSON_GetObjectItemCaseSensitive(j, "targets");
    const cJSON *jent = cJSON_GetObjectItemCaseSensitive(j, "entities");
    const cJSON *jbos = cJSON_GetObjectItemCaseSensitive(j, "bos");
    if (!js) BAD("missing \"suite\"");
    if (!cJSON_IsString(js) || !andrea_probe_suite_name_valid(js->valuestring))
        BAD("\"suite\" must be a name of 1-63 letters, digits, '_' or '-'");
    snprintf(suite, 64, "%s", js->valuestring);
    if (!!jtext == !!jtok) BAD("needs exactly one of \"text\" and \"tokens\"");
    if (jbos && !cJSON_IsBool(jbos)) BAD("\"bos\" must be true or false");
    if (jbos && jtok) BAD("\"bos\" applies to \"text\" items (a \"tokens\" item lists its ids, BOS included)");
    if (!jtar && !andrea_probe_is_builtin(suite))
        BAD("suite \"%s\" is not a built-in class, so its items need \"targets\" (docs/probes.md)", suite);
    /* a text item starts with BOS when the vocabulary has one, as built-in items do; its targets
     * and entities count the text's own tokens and are shifted past it */
    const int bos_id = jtext && tok ? andrea_tokenizer_bos(tok) : -1;
    if (jbos && cJSON_IsTrue(jbos) && tok && bos_id < 0) BAD("\"bos\": true, but this model's vocabulary has no BOS token");
    const int off = bos_id >= 0 && !(jbos && cJSON_IsFalse(jbos)) ? 1 : 0;

    if (jtok) {
        if (!cJSON_IsArray(jtok)) BAD("\"tokens\" must be an array of token ids");
        int n = cJSON_GetArraySize(jtok);
        if (n < 1) BAD("\"tokens\" is empty");
        if (n > max_seq_len) BAD("%d tokens, more than the model's max_seq_len %d", n, max_seq_len);
        it->tokens = malloc((size_t)n * sizeof(int));
        if (!it->tokens) BAD("out of memory");
        int i = 0;
        for (const cJSON *v = jtok->child; v; v = v->next, i++) {
            if (json_int(v, 0, vocab_size - 1, &it->tokens[i]))
                BAD("\"tokens\"[%d] is not a token id in 0..%d", i, vocab_size - 1);
        }
        it->n_tokens = n;
    } else if (text_tokens(jtext, tok, off ? bos_id : -1, max_seq_len, it, why, why_cap)) {
        goto done;
    }
    int T = it->n_tokens - off; /* positions the user wrote count from the first text token */

    if (jent) {
        if (!cJSON_IsArray(jent)) BAD("\"entities\" must be an array of [start, end] token spans");
        int n = cJSON_GetArraySize(jent);
        it->entities = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof(int));
        if (!it->entities) BAD("out of memory");
        int i = 0;
        for (const cJSON *sp = jent->child; sp; sp = sp->next, i++) {
            int a, b;
            if (!cJSON_IsArray(sp) || cJSON_GetArraySize(sp) != 2 || json_int(sp->child, 0, T, &a) ||
                json_int(sp->child->next, 0, T, &b) || a >= b)
                BAD("\"entities\"[%d] must be [start, end] with 0 <= start < end <= %d", i, T);
            if (i > 0 && a + off < it->entities[2 * (i - 1)])
                BAD("\"entities\"[%d] starts before the span before it (spans must be in order)", i);
            it->entities[2 * i] = a + off;
            it->entities[2 * i + 1] = b + off;
        }
        it->n_entities = n;
    }

    if (jtar) {
        if (!cJSON_IsArray(jtar)) BAD("\"targets\" must be an array of [query, [key, ...]]");
        int cap = 0, i = 0;
        for (const cJSON *tq = jtar->child; tq; tq = tq->next, i++) {
            int q;
            if (!cJSON_IsArray(tq) || cJSON_GetArraySize(tq) != 2 || !cJSON_IsArray(tq->child->next))
                BAD("\"targets\"[%d] must be [query, [key, ...]]", i);
            /* the sequence's first position attends only to itself: as a query it scores 1 on every head */
            const int q_lo = off ? 0 : 1;
            if (json_int(tq->child, q_lo, T - 1, &q))
                BAD("\"targets\"[%d]: query must be a position in %d..%d%s", i, q_lo, T - 1,
                    q_lo ? " (position 0 attends only to itself)" : "");
            int kidx = 0;
            for (const cJSON *kv = tq->child->next->child; kv; kv = kv->next, kidx++) {
                int k;
                if (json_int(kv, 0, q, &k))
                    BAD("\"targets\"[%d]: key[%d] must be a position in 0..%d (keys precede their query)", i, kidx, q);
                if (andrea_probe_targets_push(&it->targets, &it->n_targets, &cap, q + off, k + off, &e)) BAD("%.500s", e.msg);
            }
        }
        it->n_targets = andrea_probe_targets_normalize(it->targets, it->n_targets);
    } else {
        if (andrea_probe_default_targets(suite, it, tok, &e)) BAD("%.500s", e.msg);
    }
    rc = 0;
done:
#undef BAD
    cJSON_Delete(j);
    if (rc) item_clear(it);
    return rc;
}

/* Opens a probe file for reading: a regular file or a FIFO (--probes <(cmd): read as a stream);
 * a device (/dev/zero, a terminal) never ends, or never says where it does. */
static FILE *open_probe_file(const char *path, int *is_fifo, ae_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        andrea_fail(err, "%s: cannot open probe file: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        fclose(f);
        andrea_fail(err, "%s: %s, not a probe file", path, S_ISDIR(st.st_mode) ? "a folder" : "a device or socket");
        return NULL;
    }
    if (is_fifo) *is_fifo = fstat(fileno(f), &st) == 0 && S_ISFIFO(st.st_mode);
    return f;
}

static int load_stream(FILE *f, const char *path, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                       probe_suite **suites, int *n_suites, ae_error *err);

int andrea_probe_file_load(const char *path, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                    probe_suite **suites, int *n_suites, ae_error *err) {
    *suites = NULL;
    *n_suites = 0;
    FILE *f = open_probe_file(path, NULL, err);
    return f ? load_stream(f, path, tok, vocab_size, max_seq_len, suites, n_suites, err) : -1;
}

int andrea_probe_file_load_bytes(const char *path, const char *bytes, size_t len, const andrea_tokenizer *tok,
                                 int vocab_size, int max_seq_len, probe_suite **suites, int *n_suites, ae_error *err) {
    *suites = NULL;
    *n_suites = 0;
    if (len == 0) return andrea_fail(err, "%s: no probe items (one JSON object per line expected)", path);
    FILE *f = fmemopen((void *)bytes, len, "rb");
    if (!f) return andrea_fail(err, "%s: cannot read the probe text kept in memory: %s", path, strerror(errno));
    return load_stream(f, path, tok, vocab_size, max_seq_len, suites, n_suites, err);
}

int andrea_probe_file_keep(const char *path, char **bytes, size_t *len, ae_error *err) {
    *bytes = NULL;
    *len = 0;
    int fifo = 0;
    FILE *f = open_probe_file(path, &fifo, err);
    if (!f) return -1;
    if (!fifo) {
        fclose(f);
        return 0;
    }
    size_t cap = 0, n = 0;
    char *b = NULL;
    int rc = 0;
    for (;;) {
        if (n == cap) {
            if (cap >= PROBE_STREAM_MAX_BYTES) {
                rc = andrea_fail(err, "%s: a probe stream read by several checkpoints is kept in memory, and this one is over "
                                 "%d MiB: write it to a file", path, PROBE_STREAM_MAX_BYTES >> 20);
                break;
            }
            size_t want = cap ? 2 * cap : (size_t)1 << 16;
            char *nb = want <= PROBE_STREAM_MAX_BYTES ? realloc(b, want) : NULL;
            if (!nb) {
                rc = andrea_fail(err, "%s: out of memory keeping the probe stream", path);
                break;
            }
            b = nb;
            cap = want;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) rc = andrea_fail(err, "%s: read error", path);
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(b);
        return -1;
    }
    *bytes = b ? b : malloc(1);
    *len = n;
    return *bytes ? 0 : andrea_fail(err, "%s: out of memory", path);
}

/* The lines of f (closed here) into suites. */
static int load_stream(FILE *f, const char *path, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                       probe_suite **suites, int *n_suites, ae_error *err) {
    char *buf = malloc((size_t)PROBE_FILE_MAX_LINE + 2); /* the line, a CR before its LF, the NUL */
    if (!buf) {
        fclose(f);
        return andrea_fail(err, "%s: out of memory", path);
    }
    suite_list L = {0};
    problems P = {0};
    long line = 0;
    int fatal = 0, n_items = 0;
    char why[512];
    for (;;) {
        /* Read one line into buf, at most PROBE_FILE_MAX_LINE bytes kept, and a CR before its LF. */
        size_t len = 0;
        int c, saw_nul = 0, too_long = 0;
        while ((c = getc(f)) != EOF && c != '\n') {
            if (c == 0) saw_nul = 1;
            if (len == PROBE_FILE_MAX_LINE + 1) {
                too_long = 1; /* not read to its end: a stream without newlines may never have one */
                break;
            }
            buf[len++] = (char)c;
        }
        if (c == EOF && len == 0 && !too_long) break;
        buf[len] = 0;
        line++;
        if (len > 0 && buf[len - 1] == '\r') buf[--len] = 0; /* CRLF: the line's bytes are those before it */
        if (len > PROBE_FILE_MAX_LINE) too_long = 1;
        if (line > PROBE_FILE_MAX_LINES) { /* blank lines without end (`yes ''`) end here too */
            snprintf(why, sizeof why, "more than %d lines", PROBE_FILE_MAX_LINES);
            problem_add(&P, path, line, why);
            break;
        }
        if (P.n_bad >= PROBE_FILE_MAX_BAD_LINES) { /* enough said: an endless stream of bad lines ends */
            P.unread = 1;
            break;
        }
        if (too_long) { /* the rest of the file is not read: its line numbers are unknown */
            snprintf(why, sizeof why, "line longer than %d bytes", PROBE_FILE_MAX_LINE);
            problem_add(&P, path, line, why);
            break;
        }
        if (saw_nul) {
            problem_add(&P, path, line, "contains a NUL byte");
            continue;
        }
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = 0;
        size_t k = 0;
        while (k < len && isspace((unsigned char)buf[k])) k++;
        if (k == len) continue; /* blank lines are allowed */
        char suite[64];
        probe_item it;
        if (parse_line(buf, len, tok, vocab_size, max_seq_len, suite, &it, why, sizeof why)) {
            problem_add(&P, path, line, why);
            continue;
        }
        if (P.n_bad) { /* already failing: only keep checking the remaining lines */
            item_clear(&it);
            continue;
        }
        probe_suite *s = suite_for(&L, suite, path, err);
        if (!s || (suite_append(s, &it, err) && andrea_prefix(err, "%s:%ld", path, line))) {
            item_clear(&it);
            fatal = 1;
            break;
        }
        n_items++;
    }
    int read_error = ferror(f);
    fclose(f);
    free(buf);
    if (!fatal && read_error) {
        andrea_fail(err, "%s: read error", path);
        fatal = 1;
    }
    if (!fatal && P.n_bad) {
        if (P.unread)
            andrea_fail(err, "%s (%d malformed lines; the rest was not read)", P.msg, P.n_bad);
        else if (P.truncated || P.n_bad > 1)
            andrea_fail(err, "%s (%d malformed line%s)", P.msg, P.n_bad, P.n_bad > 1 ? "s" : "");
        else
            andrea_fail(err, "%s", P.msg);
        fatal = 1;
    }
    if (!fatal && n_items == 0) {
        andrea_fail(err, "%s: no probe items (one JSON object per line expected)", path);
        fatal = 1;
    }
    if (fatal) {
        andrea_probe_suites_free(L.arr, L.n);
        return -1;
    }
    *suites = L.arr;
    *n_suites = L.n;
    return 0;
}
