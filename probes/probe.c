/* probe.c — shared probe machinery: PRNG, tokenized text with offsets, the target rules, suite
 * lifetime and andrea_probe_default_targets (see probe.h, probe_internal.h, docs/probes.md).
 * Invariant: every target array leaving this module is normalized (sorted by query then key,
 * no duplicates, 0 <= key <= query < n_tokens). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/checked_size.h"
#include "../common/data_path.h"
#include "classes.h"
#include "probe.h"
#include "probe_internal.h"
#include "../common/rng.h"

int andrea_probe_is_builtin(const char *name) { return andrea_probe_class_find(name) != NULL; }

int andrea_probe_data_dir(char *out, size_t n, ae_error *err) {
    return andrea_data_dir("probes/data", "ANDREA_PROBE_DATA", out, n, err);
}

/* ---------------- PRNG ---------------- */

void andrea_probe_rng_seed(probe_rng *r, uint64_t seed, const char *stream) {
    /* FNV-1a of the stream name, mixed into the seed, so each suite has its own sequence. */
    uint64_t h = 1469598103934665603ull;
    for (const char *c = stream; c && *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    r->s = seed ^ h;
}

uint64_t andrea_probe_rng_next(probe_rng *r) { return ae_splitmix64(&r->s); }

uint32_t andrea_probe_rng_below(probe_rng *r, uint32_t n) { return (uint32_t)ae_rng_below(&r->s, n); }

/* ---------------- adding to a text ---------------- */

int andrea_probe_text_add(andrea_buf *b, const char *s, size_t n, ae_error *err) {
    if (andrea_buf_add(b, s, n)) return andrea_fail(err, "out of memory building probe text");
    return 0;
}

int andrea_probe_text_adds(andrea_buf *b, const char *s, ae_error *err) { return andrea_probe_text_add(b, s, strlen(s), err); }

/* ---------------- tokenized text ---------------- */

void andrea_ptext_free(ptext *tt) {
    free(tt->ids);
    free(tt->start);
    free(tt->end);
    memset(tt, 0, sizeof *tt);
}

static int ptext_alloc(ptext *tt, int n, ae_error *err) {
    size_t bi, bs;
    if (n < 0 || ae_mul((size_t)n + 1, sizeof(int), &bi) || ae_mul((size_t)n + 1, sizeof(size_t), &bs))
        return andrea_fail(err, "probe item too long");
    tt->ids = malloc(bi);
    tt->start = malloc(bs);
    tt->end = malloc(bs);
    if (!tt->ids || !tt->start || !tt->end) {
        andrea_ptext_free(tt);
        return andrea_fail(err, "out of memory tokenizing a probe");
    }
    tt->n = 0;
    tt->first = 0;
    return 0;
}

int andrea_ptext_encode(const andrea_tokenizer *tok, int bos, const char *text, size_t len,
                    int max_tokens, ptext *tt, ae_error *err) {
    memset(tt, 0, sizeof *tt);
    int *ids = NULL, *offs = NULL, n = 0;
    if (andrea_tokenizer_encode(tok, text, len, &ids, &offs, &n, err)) return -1;
    int first = bos >= 0 ? 1 : 0;
    int keep = n + first;
    if (keep > max_tokens) keep = max_tokens;
    if (keep < 0) keep = 0;
    if (ptext_alloc(tt, keep, err)) {
        free(ids);
        free(offs);
        return -1;
    }
    tt->first = first;
    int k = 0;
    if (first && keep > 0) {
        tt->ids[0] = bos;
        tt->start[0] = tt->end[0] = 0;
        k = 1;
    }
    for (int i = 0; k < keep; i++, k++) {
        tt->ids[k] = ids[i];
        tt->start[k] = (size_t)offs[i];
        tt->end[k] = i + 1 < n ? (size_t)offs[i + 1] : len;
    }
    tt->n = keep;
    free(ids);
    free(offs);
    return 0;
}

int andrea_ptext_decode(const andrea_tokenizer *tok, const int *ids, int n, ptext *tt, char **text,
                    size_t *text_len, ae_error *err) {
    memset(tt, 0, sizeof *tt);
    *text = NULL;
    if (ptext_alloc(tt, n, err)) return -1;
    andrea_buf b = {0};
    int bos = andrea_tokenizer_bos(tok);
    char piece[ANDREA_TOKEN_MAX_BYTES]; /* a whole token: a cut one would shift every later offset */
    for (int i = 0; i < n; i++) {
        tt->ids[i] = ids[i];
        if (i == 0 && ids[0] == bos && bos >= 0) {
            tt->first = 1;
            tt->start[0] = tt->end[0] = 0;
            continue;
        }
        int m = andrea_tokenizer_token_bytes(tok, ids[i], piece, sizeof piece);
        if (m < 0) m = 0; /* unknown ids (specials) cover no text */
        tt->start[i] = b.len;
        if (m > 0 && andrea_probe_text_add(&b, piece, (size_t)m, err)) {
            andrea_buf_free(&b);
            andrea_ptext_free(tt);
            return -1;
        }
        tt->end[i] = b.len;
    }
    tt->n = n;
    if (!b.s && andrea_probe_text_add(&b, "", 0, err)) {
        andrea_ptext_free(tt);
        return -1;
    }
    *text = b.s;
    *text_len = b.len;
    return 0;
}

int andrea_ptext_token_at(const ptext *tt, size_t p) {
    /* Binary search for the last text token starting at or before p. */
    int lo = tt->first, hi = tt->n - 1, found = -1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (tt->start[mid] <= p) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (found < 0 || p >= tt->end[found]) {
        /* Zero-width tokens can sit between; walk back to one that covers p. */
        while (found >= tt->first && found >= 0 && !(tt->start[found] <= p && p < tt->end[found])) found--;
        if (found < tt->first) return -1;
    }
    return found;
}

int andrea_ptext_span(const ptext *tt, size_t cs, size_t ce, int *t0, int *t1) {
    if (ce <= cs) return -1;
    int a = andrea_ptext_token_at(tt, cs), b = andrea_ptext_token_at(tt, ce - 1);
    if (a < 0 || b < 0) return -1;
    *t0 = a;
    *t1 = b + 1;
    return 0;
}

/* ---------------- targets ---------------- */

int andrea_probe_targets_push(probe_target **t, int *n, int *cap, int query, int key, ae_error *err) {
    if (*n == *cap) {
        size_t c = (size_t)*cap;
        if (*n == INT_MAX || andrea_grow(t, &c, (size_t)*n + 1, sizeof **t, 64))
            return andrea_fail(err, "out of memory for probe targets");
        *cap = c > INT_MAX ? INT_MAX : (int)c;
    }
    (*t)[*n].query = query;
    (*t)[*n].key = key;
    (*n)++;
    return 0;
}

static int cmp_target(const void *a, const void *b) {
    const probe_target *x = a, *y = b;
    if (x->query != y->query) return x->query < y->query ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return 0;
}

int andrea_probe_item_same_tokens(const probe_item *a, const probe_item *b) {
    return a->n_tokens == b->n_tokens && !memcmp(a->tokens, b->tokens, sizeof(int) * (size_t)(a->n_tokens > 0 ? a->n_tokens : 0));
}

int andrea_probe_targets_normalize(probe_target *t, int n) {
    if (n <= 1) return n;
    qsort(t, (size_t)n, sizeof *t, cmp_target);
    int m = 1;
    for (int i = 1; i < n; i++)
        if (cmp_target(&t[i], &t[m - 1])) t[m++] = t[i];
    return m;
}

static char closing_for(char c) { return c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : 0; }

/* One stack over the text: every opener, in text order, with the byte of its matching closer
 * (BRACKET_OPEN when none matched it). A closer that does not match the innermost open bracket
 * is ignored. */
#define BRACKET_OPEN ((size_t)-1)
typedef struct {
    size_t open, close;
} bracket_pair;

static int match_brackets(const char *text, size_t len, bracket_pair **out, int *n, ae_error *err) {
    *out = NULL;
    *n = 0;
    size_t cap = 0, depth = 0, scap = 0;
    int *stack = NULL; /* indices into *out */
    for (size_t p = 0; p < len; p++) {
        char c = text[p];
        if (closing_for(c)) {
            if (*n == INT_MAX || andrea_grow(out, &cap, (size_t)*n + 1, sizeof **out, 64) ||
                andrea_grow(&stack, &scap, depth + 1, sizeof *stack, 64))
                goto oom;
            (*out)[*n].open = p;
            (*out)[*n].close = BRACKET_OPEN;
            stack[depth++] = (*n)++;
        } else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0 || closing_for(text[(*out)[stack[depth - 1]].open]) != c) continue; /* ignored */
            (*out)[stack[--depth]].close = p;
        }
    }
    free(stack);
    return 0;
oom:
    free(stack);
    free(*out);
    *out = NULL;
    *n = 0;
    return andrea_fail(err, "out of memory matching brackets");
}

int andrea_probe_bracket_close_targets(const char *text, size_t len, const ptext *tt, probe_target **out, int *n,
                                ae_error *err) {
    *out = NULL;
    *n = 0;
    bracket_pair *pairs;
    int np, cap = 0;
    if (match_brackets(text, len, &pairs, &np, err)) return -1;
    for (int i = 0; i < np; i++) {
        if (pairs[i].close == BRACKET_OPEN) continue;
        int q = andrea_ptext_token_at(tt, pairs[i].close), k = andrea_ptext_token_at(tt, pairs[i].open);
        if (q < 0 || k < 0 || k >= q) continue; /* cut off, or opener and closer in one token */
        if (andrea_probe_targets_push(out, n, &cap, q, k, err)) {
            free(pairs);
            free(*out);
            *out = NULL;
            *n = 0;
            return -1;
        }
    }
    free(pairs);
    *n = andrea_probe_targets_normalize(*out, *n);
    return 0;
}

int andrea_probe_bracket_inside_targets(const char *text, size_t len, const ptext *tt, probe_target **out, int *n,
                                 ae_error *err) {
    *out = NULL;
    *n = 0;
    bracket_pair *pairs;
    int np, cap = 0;
    if (match_brackets(text, len, &pairs, &np, err)) return -1;
    /* Token spans of the pairs: opener token ko, closer token kc (INT_MAX: never closed, or
     * closed beyond the kept tokens). Position q is inside when ko < q < kc. */
    int *ko = malloc(sizeof(int) * (size_t)(np > 0 ? np : 1)), *kc = malloc(sizeof(int) * (size_t)(np > 0 ? np : 1));
    if (!ko || !kc) {
        free(ko);
        free(kc);
        free(pairs);
        return andrea_fail(err, "out of memory matching brackets");
    }
    for (int i = 0; i < np; i++) {
        ko[i] = andrea_ptext_token_at(tt, pairs[i].open);
        int c = pairs[i].close == BRACKET_OPEN ? -1 : andrea_ptext_token_at(tt, pairs[i].close);
        kc[i] = c < 0 ? INT_MAX : c;
    }
    /* One sweep over the tokens with a stack of the pairs holding q: pairs come in opener order
     * and nest (one stack over the text), so the pair on top is the innermost and a pair below
     * closes no earlier than the one above it. O(tokens + pairs): a long hostile text costs no
     * more than its length. ko/kc's memory is reused: stack entries are pair indices. */
    int *stack = malloc(sizeof(int) * (size_t)(np > 0 ? np : 1)), depth = 0, j = 0, rc = 0;
    if (!stack) rc = andrea_fail(err, "out of memory matching brackets");
    for (int q = tt->first; q < tt->n && !rc; q++) {
        for (; j < np && ko[j] >= 0 && ko[j] < q; j++) stack[depth++] = j;
        while (depth > 0 && kc[stack[depth - 1]] <= q) depth--;
        /* Inside a bracket nothing closes: no target (never a wrong pair). */
        if (depth == 0 || pairs[stack[depth - 1]].close == BRACKET_OPEN) continue;
        rc = andrea_probe_targets_push(out, n, &cap, q, ko[stack[depth - 1]], err);
    }
    free(stack);
    free(ko);
    free(kc);
    free(pairs);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
        return -1;
    }
    *n = andrea_probe_targets_normalize(*out, *n);
    return 0;
}

int andrea_probe_entity_targets(const int *spans, int n_spans, int n_tokens, probe_target **out, int *n,
                   ae_error *err) {
    *out = NULL;
    *n = 0;
    int cap = 0;
    /* For each query outside every mention, the most recent span = among spans with end <= i,
     * the one with the largest start. A query inside a mention is not eligible: what it should
     * attend to (its own mention or the one before) is ambiguous. Items are short: scan all. */
    for (int i = 0; i < n_tokens; i++) {
        int best = -1, inside = 0;
        for (int s = 0; s < n_spans; s++) {
            if (spans[2 * s] <= i && i < spans[2 * s + 1]) inside = 1;
            if (spans[2 * s + 1] <= i && (best < 0 || spans[2 * s] > spans[2 * best])) best = s;
        }
        if (best < 0 || inside) continue;
        for (int k = spans[2 * best]; k < spans[2 * best + 1]; k++) {
            if (andrea_probe_targets_push(out, n, &cap, i, k, err)) {
                free(*out);
                *out = NULL;
                *n = 0;
                return -1;
            }
        }
    }
    *n = andrea_probe_targets_normalize(*out, *n);
    return 0;
}

/* ---------------- default targets ---------------- */

/* induction / duplicate on arbitrary tokens: position i is a query when it lies in the second
 * occurrence of a repeated span of at least 2 tokens: some earlier j with tokens[j] == tokens[i]
 * whose match around (j, i) (backward from j and i, and forward while j's side stays before i)
 * covers >= 2 tokens. The j with the longest match wins (ties: the nearest), giving key j + 1
 * (induction) or j (duplicate). A lone repeated token (a space, a common letter) is not a query.
 * The pairs (j, i = j + d) of one distance d lie on a diagonal, where equal pairs form runs
 * [s, e] of j: a pair's backward match is j - s + 1 and its forward match e - j, cut to d - 1
 * (j's side stays before i). One walk along each diagonal, nearest distances first, finds every
 * match length exactly in O(n^2), however long the matches are. */
int andrea_probe_repeat_targets(probe_item *it, int shift, ae_error *err) {
    const int *t = it->tokens, n = it->n_tokens;
    if (n < 2) return 0;
    int *best = malloc(sizeof(int) * (size_t)n), *best_len = malloc(sizeof(int) * (size_t)n);
    if (!best || !best_len) {
        free(best);
        free(best_len);
        return andrea_fail(err, "out of memory finding the targets of a %d-token item", n);
    }
    for (int i = 0; i < n; i++) {
        best[i] = -1;
        best_len[i] = 1;
    }
    for (int d = 1; d < n; d++)
        for (int s = 0; s + d < n;) {
            if (t[s] != t[s + d]) {
                s++;
                continue;
            }
            int e = s;
            while (e + 1 + d < n && t[e + 1] == t[e + 1 + d]) e++;
            for (int j = s; j <= e; j++) {
                const int fwd = e - j < d - 1 ? e - j : d - 1, len = j - s + 1 + fwd;
                if (len > best_len[j + d]) { /* strict: a nearer j (smaller d) keeps a tie */
                    best_len[j + d] = len;
                    best[j + d] = j;
                }
            }
            s = e + 1;
        }
    int cap = 0, rc = 0;
    for (int i = 1; i < n && rc == 0; i++)
        if (best[i] >= 0 && best[i] + shift <= i)
            rc = andrea_probe_targets_push(&it->targets, &it->n_targets, &cap, i, best[i] + shift, err);
    free(best);
    free(best_len);
    return rc;
}

int andrea_probe_text_targets(probe_item *it, const andrea_tokenizer *tok, probe_text_rule rule, ae_error *err) {
    if (!tok) return andrea_fail(err, "a bracket item without \"targets\" needs a tokenizer to find its brackets");
    ptext tt;
    char *text;
    size_t len;
    if (andrea_ptext_decode(tok, it->tokens, it->n_tokens, &tt, &text, &len, err)) return -1;
    int rc = rule(text, len, &tt, &it->targets, &it->n_targets, err);
    free(text);
    andrea_ptext_free(&tt);
    return rc;
}

int andrea_probe_default_targets(const char *name, probe_item *it, const andrea_tokenizer *tok, ae_error *err) {
    free(it->targets);
    it->targets = NULL;
    it->n_targets = 0;
    const probe_class *c = andrea_probe_class_find(name);
    if (!c) return 0; /* a user suite: its targets are its own */
    if (c->default_targets(it, tok, err)) {
        free(it->targets);
        it->targets = NULL;
        it->n_targets = 0;
        return -1;
    }
    it->n_targets = andrea_probe_targets_normalize(it->targets, it->n_targets);
    return 0;
}

/* ---------------- lifetime ---------------- */

void andrea_probe_suite_free(probe_suite *s) {
    if (!s) return;
    for (int i = 0; i < s->n_items; i++) {
        free(s->items[i].tokens);
        free(s->items[i].targets);
        free(s->items[i].entities);
    }
    free(s->items);
    memset(s, 0, sizeof *s);
}

void andrea_probe_suites_free(probe_suite *suites, int n) {
    if (!suites) return;
    for (int i = 0; i < n; i++) andrea_probe_suite_free(&suites[i]);
    free(suites);
}

/* ---------------- --probes ---------------- */

int andrea_probe_spec_is_file(const char *spec) {
    if (!spec || !*spec || !strcmp(spec, "all")) return 0;
    size_t n = strlen(spec);
    if (strchr(spec, '/') || (n > 6 && !strcmp(spec + n - 6, ".jsonl")) || (n > 5 && !strcmp(spec + n - 5, ".json")))
        return 1;
    /* a plain word: built-in names win, then an existing file of that name */
    char list[1024];
    int all_builtin = n < sizeof list;
    if (all_builtin) {
        memcpy(list, spec, n + 1);
        char *save = NULL;
        for (char *w = strtok_r(list, ",", &save); w && all_builtin; w = strtok_r(NULL, ",", &save))
            all_builtin = andrea_probe_is_builtin(w);
    }
    if (all_builtin) return 0;
    struct stat st;
    return stat(spec, &st) == 0 && S_ISREG(st.st_mode);
}

int andrea_probe_suites_load(const char *spec, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                      const probe_options *opt, probe_suite **suites, int *n_suites, ae_error *err) {
    if (!spec || !*spec) return andrea_probe_suites_builtin_list(NULL, tok, vocab_size, max_seq_len, opt, suites, n_suites, err);
    probe_sources ps; /* a mix of suites and files, as one --probes argument */
    andrea_probe_sources_init(&ps);
    int rc = andrea_probe_sources_add(&ps, spec, err);
    if (!rc) rc = andrea_probe_sources_load(&ps, tok, vocab_size, max_seq_len, opt, suites, n_suites, err);
    andrea_probe_sources_free(&ps);
    return rc;
}
