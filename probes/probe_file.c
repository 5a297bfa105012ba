/* probe_file.c — user probe files: JSON Lines, one item a line (docs/probes.md).
 *
 * Job: parse {"suite", "text"|"tokens", "targets"?|"char_targets"?, "entities"?, "bos"?} lines
 * with cJSON, tokenize texts, validate everything against the model (ids < vocab_size,
 * 1 <= length <= max_seq_len, key <= query < length, 0 <= start < end <= length, character
 * spans on token boundaries), fill the suite's built-in target rule where a line of a class has
 * no targets (a suite that is no class and gives none is map-only: every item without targets),
 * and group items by suite in order of first appearance.
 * Invariants: a line is at most PROBE_FILE_MAX_LINE bytes (read with a bounded buffer, never
 * slurped); suite names are [A-Za-z0-9_-]{1,63} because they become HDF5 group names.
 * Failure contract: every malformed line is reported in the one error message as
 * "FILE:LINE: problem; FILE:LINE: problem; ..." (as many as fit, then a count); nothing is
 * returned when any line is bad.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/checked_size.h"
#include "../common/strict_input.h"
#include "probe.h"
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

static probe_suite *suite_find(suite_list *L, const char *name) {
    for (int i = 0; i < L->n; i++)
        if (!strcmp(L->arr[i].name, name)) return &L->arr[i];
    return NULL;
}

static probe_suite *suite_for(suite_list *L, const char *name, const char *path, ae_error *err) {
    probe_suite *found = suite_find(L, name);
    if (found) return found;
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

/* A "text" item's tokens into it: the text tokenized, after bos (-1: none); *offs (may be NULL) the
 * byte where each text token starts (malloc'd, it->n_tokens - (bos >= 0) entries). 0, or -1 with why. */
static int text_tokens(const cJSON *jtext, const andrea_tokenizer *tok, int bos, int max_seq_len, probe_item *it,
                       int **offs_out, char *why, size_t why_cap) {
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
    if (n < 1 || n + off > max_seq_len) {
        free(ids);
        free(offs);
        if (n < 1) return snprintf(why, why_cap, "\"text\" tokenizes to nothing"), -1;
        return snprintf(why, why_cap, "\"text\" is %d tokens%s, more than the model's max_seq_len %d", n + off,
                        off ? " with BOS" : "", max_seq_len), -1;
    }
    if (off) {
        int *with = realloc(ids, (size_t)(n + 1) * sizeof *with);
        if (!with) {
            free(ids);
            free(offs);
            return snprintf(why, why_cap, "out of memory"), -1;
        }
        memmove(with + 1, with, (size_t)n * sizeof *with);
        with[0] = bos;
        ids = with;
    }
    it->tokens = ids;
    it->n_tokens = n + off;
    if (offs_out) *offs_out = offs;
    else free(offs);
    return 0;
}

/* "entities": [[start, end], ...] token spans of the text's own tokens (T of them), shifted by off. */
static int parse_entities(const cJSON *jent, int T, int off, probe_item *it, char *why, size_t why_cap) {
    if (!cJSON_IsArray(jent)) return snprintf(why, why_cap, "\"entities\" must be an array of [start, end] token spans"), -1;
    int n = cJSON_GetArraySize(jent);
    it->entities = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof(int));
    if (!it->entities) return snprintf(why, why_cap, "out of memory"), -1;
    int i = 0;
    for (const cJSON *sp = jent->child; sp; sp = sp->next, i++) {
        int a, b;
        if (!cJSON_IsArray(sp) || cJSON_GetArraySize(sp) != 2 || json_int(sp->child, 0, T, &a) ||
            json_int(sp->child->next, 0, T, &b) || a >= b)
            return snprintf(why, why_cap, "\"entities\"[%d] must be [start, end] with 0 <= start < end <= %d", i, T), -1;
        if (i > 0 && a + off < it->entities[2 * (i - 1)])
            return snprintf(why, why_cap, "\"entities\"[%d] starts before the span before it (spans must be in order)", i), -1;
        it->entities[2 * i] = a + off;
        it->entities[2 * i + 1] = b + off;
    }
    it->n_entities = n;
    return 0;
}

/* "targets": [[query, [key, ...]], ...] token positions of the text's own tokens (T), shifted by off. */
static int parse_targets(const cJSON *jtar, int T, int off, probe_item *it, char *why, size_t why_cap) {
    ae_error e;
    if (!cJSON_IsArray(jtar)) return snprintf(why, why_cap, "\"targets\" must be an array of [query, [key, ...]]"), -1;
    int cap = 0, i = 0;
    for (const cJSON *tq = jtar->child; tq; tq = tq->next, i++) {
        int q;
        if (!cJSON_IsArray(tq) || cJSON_GetArraySize(tq) != 2 || !cJSON_IsArray(tq->child->next))
            return snprintf(why, why_cap, "\"targets\"[%d] must be [query, [key, ...]]", i), -1;
        /* the sequence's first position attends only to itself: as a query it scores 1 on every head */
        const int q_lo = off ? 0 : 1;
        if (json_int(tq->child, q_lo, T - 1, &q))
            return snprintf(why, why_cap, "\"targets\"[%d]: query must be a token position in %d..%d%s", i, q_lo, T - 1,
                            q_lo ? " (position 0 attends only to itself)" : ""), -1;
        int kidx = 0;
        for (const cJSON *kv = tq->child->next->child; kv; kv = kv->next, kidx++) {
            int k;
            if (json_int(kv, 0, q, &k))
                return snprintf(why, why_cap, "\"targets\"[%d]: key[%d] must be a token position in 0..%d (keys precede "
                                "their query)", i, kidx, q), -1;
            if (andrea_probe_targets_push(&it->targets, &it->n_targets, &cap, q + off, k + off, &e))
                return snprintf(why, why_cap, "%.500s", e.msg), -1;
        }
    }
    it->n_targets = andrea_probe_targets_normalize(it->targets, it->n_targets);
    return 0;
}

/* A text and its tokens, for "char_targets": chars[b] the character of byte b (tokenizer.h),
 * first[c] the byte where character c starts (first[n_chars] = len), offs[t] the byte where
 * text token t starts (T tokens). */
typedef struct {
    size_t len, n_chars, *chars, *first;
    const int *offs;
    int T;
} char_map;

/* The text token that starts at character c (T when c is the end of the text), or -1 with why
 * naming c and the token it falls inside. */
static int char_boundary(const char_map *cm, int idx, long c, char *why, size_t why_cap) {
    const size_t b = cm->first[c];
    if (b == cm->len) return cm->T;
    int lo = 0, hi = cm->T - 1; /* the last token starting at or before b */
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if ((size_t)cm->offs[mid] <= b) lo = mid;
        else hi = mid - 1;
    }
    if ((size_t)cm->offs[lo] == b) return lo;
    const size_t ts = cm->chars[cm->offs[lo]], te = lo + 1 < cm->T ? cm->chars[cm->offs[lo + 1]] : cm->n_chars;
    snprintf(why, why_cap, "\"char_targets\"[%d]: character %ld falls inside text token %d (characters %zu..%zu): a span "
             "starts and ends where tokens do (andrea tokenize --offsets prints them)", idx, c, lo, ts, ts == te ? te : te - 1);
    return -1;
}

/* One [start, end) character span of "char_targets"[idx] into text tokens [*t0, *t1). */
static int char_span(const char_map *cm, const cJSON *sp, int idx, int *t0, int *t1, char *why, size_t why_cap) {
    int a, b;
    const long nc = (long)cm->n_chars;
    if (!cJSON_IsArray(sp) || cJSON_GetArraySize(sp) != 2 || json_int(sp->child, 0, INT_MAX, &a) ||
        json_int(sp->child->next, 0, INT_MAX, &b) || a >= b)
        return snprintf(why, why_cap, "\"char_targets\"[%d]: a span is [start, end] with 0 <= start < end (characters)", idx), -1;
    if (b > nc)
        return snprintf(why, why_cap, "\"char_targets\"[%d]: span [%d, %d) lies outside the text's %ld characters", idx, a, b,
                        nc), -1;
    if ((*t0 = char_boundary(cm, idx, a, why, why_cap)) < 0 || (*t1 = char_boundary(cm, idx, b, why, why_cap)) < 0) return -1;
    return 0;
}

/* "char_targets": [[[qs, qe], [[ks, ke], ...]], ...]: every text token of the query span gets
 * every text token of the key spans as keys (shifted by off). */
static int char_targets_parse(const cJSON *jct, const char_map *cm, int off, probe_item *it, char *why, size_t why_cap) {
    ae_error e;
    int cap = 0, i = 0;
    /* Each (query, key) pair is kept once as it comes: spans repeated over a 1 MiB line pushed
     * every copy and reached gigabytes before the de-duplication at the end. seen: a bit per pair
     * of the item's n positions (n <= max_seq_len, checked by the caller) up to 8192 positions;
     * longer items de-duplicate whenever their list doubles. */
    const size_t n = (size_t)cm->T + (size_t)off;
    unsigned char *seen = n <= 8192 ? calloc(n * n / 8 + 1, 1) : NULL;
    if (n <= 8192 && !seen) return snprintf(why, why_cap, "out of memory for the targets of %zu tokens", n), -1;
    int rc = -1, next_dedup = 1 << 20;
    for (const cJSON *tq = jct->child; tq; tq = tq->next, i++) {
        int q0, q1;
        if (!cJSON_IsArray(tq) || cJSON_GetArraySize(tq) != 2 || !cJSON_IsArray(tq->child->next))
            return snprintf(why, why_cap, "\"char_targets\"[%d] must be [[start, end], [[start, end], ...]]: a query span "
                            "and its key spans", i), -1;
        if (char_span(cm, tq->child, i, &q0, &q1, why, why_cap)) goto out;
        if (q0 + off == 0) {
            snprintf(why, why_cap, "\"char_targets\"[%d]: the query span holds the item's first token, which attends only "
                     "to itself", i);
            goto out;
        }
        for (const cJSON *ks = tq->child->next->child; ks; ks = ks->next) {
            int k0, k1;
            if (char_span(cm, ks, i, &k0, &k1, why, why_cap)) goto out;
            if (k1 - 1 > q0) {
                snprintf(why, why_cap, "\"char_targets\"[%d]: a key span ends after the query span's first token (keys "
                         "precede their query)", i);
                goto out;
            }
            for (int q = q0; q < q1; q++)
                for (int k = k0; k < k1; k++) {
                    const size_t bit = (size_t)(q + off) * n + (size_t)(k + off);
                    if (seen && (seen[bit / 8] & (1u << (bit % 8)))) continue;
                    if (seen) seen[bit / 8] |= (unsigned char)(1u << (bit % 8));
                    if (andrea_probe_targets_push(&it->targets, &it->n_targets, &cap, q + off, k + off, &e)) {
                        snprintf(why, why_cap, "%.500s", e.msg);
                        goto out;
                    }
                    if (!seen && it->n_targets >= next_dedup) {
                        it->n_targets = andrea_probe_targets_normalize(it->targets, it->n_targets);
                        next_dedup = it->n_targets < (1 << 29) ? 2 * it->n_targets + (1 << 20) : INT_MAX;
                    }
                }
        }
    }
    it->n_targets = andrea_probe_targets_normalize(it->targets, it->n_targets);
    rc = 0;
out:
    free(seen);
    return rc;
}

/* "char_targets" of a text item (text: its bytes; offs: its T text tokens' start bytes). */
static int parse_char_targets(const cJSON *jct, const char *text, const int *offs, int T, int off, probe_item *it,
                              char *why, size_t why_cap) {
    if (!cJSON_IsArray(jct)) return snprintf(why, why_cap, "\"char_targets\" must be an array of [[start, end], [[start, end], ...]]"), -1;
    char_map cm = {.len = strlen(text), .offs = offs, .T = T};
    ae_error e;
    if (andrea_text_char_index(text, cm.len, &cm.chars, &e)) return snprintf(why, why_cap, "%.500s", e.msg), -1;
    cm.n_chars = cm.chars[cm.len];
    int rc = -1;
    if (!(cm.first = malloc((cm.n_chars + 1) * sizeof *cm.first))) {
        snprintf(why, why_cap, "out of memory");
    } else {
        for (size_t b = 0; b < cm.len; b++)
            if (b == 0 || cm.chars[b] != cm.chars[b - 1]) cm.first[cm.chars[b]] = b;
        cm.first[cm.n_chars] = cm.len;
        rc = char_targets_parse(jct, &cm, off, it, why, why_cap);
    }
    free(cm.chars);
    free(cm.first);
    return rc;
}

static const char *const line_keys[] = {"suite", "text", "tokens", "targets", "char_targets", "entities", "bos", NULL};

/* The keys of one line, checked: NULL and why set when something is wrong with them. */
typedef struct {
    const cJSON *suite, *text, *tokens, *targets, *char_targets, *entities, *bos;
} line_fields;

static int line_fields_get(const cJSON *j, line_fields *f, char suite[64], char *why, size_t why_cap) {
    for (const cJSON *k = j->child; k; k = k->next) {
        int known = 0;
        for (int i = 0; line_keys[i] && !known; i++) known = !strcmp(k->string, line_keys[i]);
        if (!known)
            return snprintf(why, why_cap, "unknown key \"%.40s\" (allowed: suite, text, tokens, targets, char_targets, "
                            "entities, bos)", k->string), -1;
    }
    f->suite = cJSON_GetObjectItemCaseSensitive(j, "suite");
    f->text = cJSON_GetObjectItemCaseSensitive(j, "text");
    f->tokens = cJSON_GetObjectItemCaseSensitive(j, "tokens");
    f->targets = cJSON_GetObjectItemCaseSensitive(j, "targets");
    f->char_targets = cJSON_GetObjectItemCaseSensitive(j, "char_targets");
    f->entities = cJSON_GetObjectItemCaseSensitive(j, "entities");
    f->bos = cJSON_GetObjectItemCaseSensitive(j, "bos");
    if (!f->suite) return snprintf(why, why_cap, "missing \"suite\""), -1;
    if (!cJSON_IsString(f->suite) || !andrea_probe_suite_name_valid(f->suite->valuestring))
        return snprintf(why, why_cap, "\"suite\" must be a name of 1-63 letters, digits, '_' or '-'"), -1;
    snprintf(suite, 64, "%s", f->suite->valuestring);
    if (!!f->text == !!f->tokens) return snprintf(why, why_cap, "needs exactly one of \"text\" and \"tokens\""), -1;
    if (f->bos && !cJSON_IsBool(f->bos)) return snprintf(why, why_cap, "\"bos\" must be true or false"), -1;
    if (f->bos && f->tokens)
        return snprintf(why, why_cap, "\"bos\" applies to \"text\" items (a \"tokens\" item lists its ids, BOS included)"), -1;
    if (f->targets && f->char_targets)
        return snprintf(why, why_cap, "give \"targets\" (token positions) or \"char_targets\" (character spans), not both"), -1;
    if (f->char_targets && f->tokens)
        return snprintf(why, why_cap, "\"char_targets\" are character spans of a \"text\"; a \"tokens\" item gives "
                        "\"targets\""), -1;
    return 0;
}

/* The ids of a "tokens" item into it. */
static int parse_token_ids(const cJSON *jtok, int vocab_size, int max_seq_len, probe_item *it, char *why, size_t why_cap) {
    if (!cJSON_IsArray(jtok)) return snprintf(why, why_cap, "\"tokens\" must be an array of token ids"), -1;
    int n = cJSON_GetArraySize(jtok);
    if (n < 1) return snprintf(why, why_cap, "\"tokens\" is empty"), -1;
    if (n > max_seq_len) return snprintf(why, why_cap, "%d tokens, more than the model's max_seq_len %d", n, max_seq_len), -1;
    if (!(it->tokens = malloc((size_t)n * sizeof(int)))) return snprintf(why, why_cap, "out of memory"), -1;
    int i = 0;
    for (const cJSON *v = jtok->child; v; v = v->next, i++)
        if (json_int(v, 0, vocab_size - 1, &it->tokens[i]))
            return snprintf(why, why_cap, "\"tokens\"[%d] is not a token id in 0..%d", i, vocab_size - 1), -1;
    it->n_tokens = n;
    return 0;
}

/* Parses one line into *it and its suite name; *map_only: the item is of a map-only suite (no
 * targets, no class). Returns 0, or -1 with why in `why`. */
static int parse_line(const char *line, size_t len, const andrea_tokenizer *tok, int vocab_size,
                      int max_seq_len, char suite[64], probe_item *it, int *map_only, char *why, size_t why_cap) {
    memset(it, 0, sizeof *it);
    *map_only = 0;
    /* strict (common/strict_input.h): a second object after the first ("{..} {..}": an
     * item silently dropped), a key given twice (cJSON would answer the first, a Python writer
     * meant the last) and "\u0000" in a text (cJSON's string would end there) are refused */
    char jwhy[160];
    cJSON *j = andrea_json_parse_strict(line, len, 1, NULL, jwhy, sizeof jwhy);
    int rc = -1, *offs = NULL;
    ae_error e;
    line_fields f;
    if (!j) {
        snprintf(why, why_cap, "%s", jwhy);
        goto done;
    }
    if (!cJSON_IsObject(j)) {
        snprintf(why, why_cap, "not a JSON object");
        goto done;
    }
    if (line_fields_get(j, &f, suite, why, why_cap)) goto done;
    /* a text item starts with BOS when the vocabulary has one, as built-in items do; its targets
     * and entities count the text's own tokens and are shifted past it */
    const int bos_id = f.text && tok ? andrea_tokenizer_bos(tok) : -1;
    if (f.bos && cJSON_IsTrue(f.bos) && tok && bos_id < 0) {
        snprintf(why, why_cap, "\"bos\": true, but this model's vocabulary has no BOS token");
        goto done;
    }
    const int off = bos_id >= 0 && !(f.bos && cJSON_IsFalse(f.bos)) ? 1 : 0;
    if (f.tokens ? parse_token_ids(f.tokens, vocab_size, max_seq_len, it, why, why_cap)
                 : text_tokens(f.text, tok, off ? bos_id : -1, max_seq_len, it, &offs, why, why_cap))
        goto done;
    const int T = it->n_tokens - off; /* positions the user wrote count from the first text token */
    if (f.entities && parse_entities(f.entities, T, off, it, why, why_cap)) goto done;
    if (f.targets) {
        if (parse_targets(f.targets, T, off, it, why, why_cap)) goto done;
    } else if (f.char_targets) {
        if (parse_char_targets(f.char_targets, f.text->valuestring, offs, T, off, it, why, why_cap)) goto done;
    } else if (!andrea_probe_is_builtin(suite)) {
        *map_only = 1; /* no class, no targets: its maps are dumped and shown, nothing is scored */
    } else if (andrea_probe_default_targets(suite, it, tok, &e)) {
        snprintf(why, why_cap, "%.500s", e.msg);
        goto done;
    }
    rc = 0;
done:
    free(offs);
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
        int map_only;
        if (parse_line(buf, len, tok, vocab_size, max_seq_len, suite, &it, &map_only, why, sizeof why)) {
            problem_add(&P, path, line, why);
            continue;
        }
        probe_suite *s = suite_find(&L, suite);
        if (s && s->map_only != map_only) { /* a forgotten "targets" must not turn an item map-only */
            snprintf(why, sizeof why, "suite \"%s\" %s: give every item of a suite targets, or none (a map-only suite)",
                     suite, map_only ? "has targets on an earlier line, this item none"
                                     : "is map-only on an earlier line (no targets), this item has them");
            problem_add(&P, path, line, why);
            item_clear(&it);
            continue;
        }
        if (P.n_bad) { /* already failing: only keep checking the remaining lines */
            if (!s && (s = suite_for(&L, suite, path, err))) s->map_only = map_only; /* for the check above */
            item_clear(&it);
            continue;
        }
        if (!s && (s = suite_for(&L, suite, path, err))) s->map_only = map_only;
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
