/* probe_builtin.c — the generators of the built-in suites (docs/probes.md) and the suite
 * builder; which class uses which generator, stream and target rule is its entry in classes.c.
 *
 * Job: generate each suite's items, seeded and deterministic, for any tokenizer. Text suites
 * (prev_token, bracket, bracket_close, entity, bos) are generated as text and tokenized, and their
 * targets are computed on the tokens through the tokenizer's byte offsets (docs/probes.md defines
 * the mapping); induction and duplicate draw token ids directly, so both copies are identical
 * token for token.
 * Invariants: same (name, seed, n_items, seq_len, tokenizer) -> same items; every item is
 * 1..seq_len tokens and starts with BOS when the vocabulary has one (models see BOS first in
 * training and generation; without it every suite would probe an unusual context); classes that
 * share a stream (induction and duplicate; bracket and bracket_close) have the same sequences and
 * differ only in the target rule.
 * Failure contract: -1 with "PATH: problem" (missing or empty data files) or "suite: problem";
 * *out is left empty.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/checked_size.h"
#include "probe.h"
#include "classes.h"
#include "probe_internal.h"

/* ---------------- data files ---------------- */

#define DATA_MAX_BYTES (16u << 20)

int andrea_probe_read_data(const char *name, char **out, size_t *len, ae_error *err) {
    char dir[4096], path[4096 + 64];
    if (andrea_probe_data_dir(dir, sizeof dir, err)) return -1;
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof path) return andrea_fail(err, "%s: probe data path too long", name);
    FILE *f = fopen(path, "rb");
    if (!f) return andrea_fail(err, "%s: cannot open probe data (set ANDREA_PROBE_DATA to the probes/data folder)", path);
    char *buf = malloc(DATA_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        return andrea_fail(err, "%s: out of memory", path);
    }
    size_t got = fread(buf, 1, DATA_MAX_BYTES + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got > DATA_MAX_BYTES || got == 0) {
        free(buf);
        return andrea_fail(err, "%s: %s", path, bad ? "read error" : got ? "larger than 16 MiB" : "empty");
    }
    buf[got] = 0;
    *out = buf;
    *len = got;
    return 0;
}

/* One name per line; blank lines and lines starting with '#' are skipped; whitespace trimmed.
 * The names point into *store, which the caller frees together with *names. */
static int read_name_list(const char *file, char **store, char ***names, int *n, ae_error *err) {
    size_t len;
    if (andrea_probe_read_data(file, store, &len, err)) return -1;
    size_t cap = 0;
    *names = NULL;
    *n = 0;
    char *save = NULL;
    for (char *line = strtok_r(*store, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        while (*line && isspace((unsigned char)*line)) line++;
        char *end = line + strlen(line);
        while (end > line && isspace((unsigned char)end[-1])) *--end = 0;
        if (!*line || *line == '#') continue;
        if (andrea_grow(names, &cap, (size_t)*n + 1, sizeof **names, 64)) goto oom;
        (*names)[(*n)++] = line;
    }
    if (*n < 3) {
        char dir[4096];
        if (andrea_probe_data_dir(dir, sizeof dir, NULL)) snprintf(dir, sizeof dir, "probes/data");
        andrea_fail(err, "%s/%s: needs at least 3 names, found %d", dir, file, *n);
        goto fail;
    }
    return 0;
oom:
    andrea_fail(err, "%s: out of memory", file);
fail:
    free(*names);
    free(*store);
    *names = NULL;
    *store = NULL;
    return -1;
}

/* ---------------- item helpers ---------------- */

static int item_from_tok_text(probe_item *it, const ptext *tt, ae_error *err) {
    memset(it, 0, sizeof *it);
    it->tokens = malloc((size_t)(tt->n > 0 ? tt->n : 1) * sizeof(int));
    if (!it->tokens) return andrea_fail(err, "out of memory for probe tokens");
    memcpy(it->tokens, tt->ids, (size_t)tt->n * sizeof(int));
    it->n_tokens = tt->n;
    return 0;
}

/* Tokenizes text; when it yields fewer than want tokens the caller should grow the text. */
static int encode_window(const andrea_tokenizer *tok, int bos, const andrea_buf *text, int want, ptext *tt,
                         ae_error *err) {
    return andrea_ptext_encode(tok, bos, text->s, text->len, want, tt, err);
}

/* ---------------- prev_token and bos: natural-text windows ---------------- */

/* A window of prose starting at a random word boundary, long enough for `want` tokens of any
 * tokenizer (tokens never cover less than one byte, English BPE averages ~4.5 bytes). */
int andrea_probe_prose_window(const char *corpus, size_t clen, probe_rng *r, size_t bytes, andrea_buf *out, ae_error *err) {
    size_t p = andrea_probe_rng_below(r, (uint32_t)clen);
    while (p < clen && !isspace((unsigned char)corpus[p])) p++; /* to the next word start */
    while (p < clen && isspace((unsigned char)corpus[p])) p++;
    if (p >= clen) p = 0;
    out->len = 0;
    while (out->len < bytes) {
        size_t take = clen - p;
        if (take > bytes - out->len) take = bytes - out->len;
        if (andrea_probe_text_add(out, corpus + p, take, err)) return -1;
        p = 0; /* wrap around to the start of the corpus, separated by whitespace */
        if (out->len < bytes && !isspace((unsigned char)corpus[clen - 1]) && andrea_probe_text_add(out, " ", 1, err)) return -1;
    }
    return 0;
}

int andrea_probe_gen_prose(const probe_class *c, const probe_gen *g, probe_suite *s, ae_error *err) {
    const andrea_tokenizer *tok = g->tok;
    int seq_len = g->seq_len;
    probe_rng *r = g->rng;
    char *corpus;
    size_t clen;
    if (andrea_probe_read_data("prose.txt", &corpus, &clen, err)) return -1;
    int bos = andrea_tokenizer_bos(tok); /* -1 without one */
    andrea_buf text = {0};
    int rc = 0;
    for (int i = 0; i < s->n_items && !rc; i++) {
        size_t bytes = (size_t)seq_len * 8 + 16;
        ptext tt;
        rc = andrea_probe_prose_window(corpus, clen, r, bytes, &text, err) ||
             encode_window(tok, bos, &text, seq_len, &tt, err);
        if (rc) break;
        rc = item_from_tok_text(&s->items[i], &tt, err) ||
             andrea_probe_default_targets(c->name, &s->items[i], tok, err);
        andrea_ptext_free(&tt);
    }
    andrea_buf_free(&text);
    free(corpus);
    return rc ? -1 : 0;
}

/* ---------------- induction and duplicate ---------------- */

int andrea_probe_gen_repeat(const probe_class *c, const probe_gen *g, probe_suite *s, ae_error *err) {
    const char *name = c->name;
    const andrea_tokenizer *tok = g->tok;
    int vocab_size = g->vocab_size, seq_len = g->seq_len;
    probe_rng *r = g->rng;
    int bos = andrea_tokenizer_bos(tok);
    int first = bos >= 0 ? 1 : 0;
    int byte_level = !strcmp(andrea_tokenizer_kind(tok), "byte");
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    /* The pool: printable ASCII letters for byte-level models, every non-special id for BPE.
     * Tokens within one copy are distinct (drawn without replacement), so the earlier
     * occurrence of each second-copy token is unique and the targets are unambiguous. */
    int pool = byte_level ? (int)(sizeof letters - 1) : vocab_size - (bos >= 0 ? 1 : 0);
    int n = (seq_len - first) / 2;
    if (n > pool) n = pool;
    if (n < 2) return andrea_fail(err, "%s: needs at least %d tokens per item, got %d", name, 4 + first, seq_len);
    int *chosen = malloc((size_t)n * sizeof *chosen);
    if (!chosen) return andrea_fail(err, "%s: out of memory", name);
    char piece[64];
    for (int it = 0; it < s->n_items; it++) {
        for (int k = 0; k < n; k++) {
            int id, dup;
            do {
                if (byte_level) {
                    id = (unsigned char)letters[andrea_probe_rng_below(r, (uint32_t)pool)];
                } else {
                    id = (int)andrea_probe_rng_below(r, (uint32_t)vocab_size);
                    /* specials: BOS, and ids the tokenizer cannot spell */
                    if (id == bos || andrea_tokenizer_token_bytes(tok, id, piece, sizeof piece) <= 0) {
                        dup = 1;
                        continue;
                    }
                }
                dup = 0;
                for (int j = 0; j < k && !dup; j++) dup = chosen[j] == id;
            } while (dup);
            chosen[k] = id;
        }
        probe_item *item = &s->items[it];
        memset(item, 0, sizeof *item);
        item->n_tokens = first + 2 * n;
        item->tokens = malloc((size_t)item->n_tokens * sizeof(int));
        if (!item->tokens) {
            free(chosen);
            return andrea_fail(err, "%s: out of memory", name);
        }
        if (first) item->tokens[0] = bos;
        for (int k = 0; k < n; k++) item->tokens[first + k] = item->tokens[first + n + k] = chosen[k];
        /* The class's rule: tokens within a copy are distinct, so second-copy position i gets
         * i - n + 1 (induction) or i - n (duplicate), the first copy nothing. */
        if (andrea_probe_default_targets(name, item, tok, err)) {
            free(chosen);
            return -1;
        }
    }
    free(chosen);
    return 0;
}

/* ---------------- bracket: code-like text ---------------- */

static const char *const idents[] = {"f", "g", "x", "y", "i", "j", "n", "a", "b", "buf", "key",
                                     "val", "len", "node", "item", "data", "cfg", "out", "tmp",
                                     "count", "map", "list", "args", "self", "ctx", "row"};
#define N_IDENTS (int)(sizeof idents / sizeof idents[0])
static const char *const binops[] = {"+", "-", "*", "/", "==", "<", ">", "&&", "||", "%"};
#define N_BINOPS (int)(sizeof binops / sizeof binops[0])

static int put(andrea_buf *b, const char *s, ae_error *err) { return andrea_probe_text_adds(b, s, err); }

static int put_atom(andrea_buf *b, probe_rng *r, ae_error *err) {
    if (andrea_probe_rng_below(r, 4) == 0) {
        char num[16];
        snprintf(num, sizeof num, "%u", andrea_probe_rng_below(r, 100));
        return put(b, num, err);
    }
    return put(b, idents[andrea_probe_rng_below(r, N_IDENTS)], err);
}

/* An expression with nested groups. Groups hold several members, so a closer often follows an
 * inner group that already closed: its matching opener is then not the most recent opener. */
static int put_expr(andrea_buf *b, probe_rng *r, int depth, ae_error *err) {
    if (depth >= 4) return put_atom(b, r, err);
    uint32_t kind = andrea_probe_rng_below(r, depth == 0 ? 6 : 8);
    int n, rc = 0;
    switch (kind) {
    case 0: /* call: f(a, b[i], ...) */
        n = 1 + (int)andrea_probe_rng_below(r, 3);
        rc = put(b, idents[andrea_probe_rng_below(r, N_IDENTS)], err) || put(b, "(", err);
        for (int k = 0; k < n && !rc; k++) rc = (k && put(b, ", ", err)) || put_expr(b, r, depth + 1, err);
        return rc || put(b, ")", err);
    case 1: /* index: a[expr] or a[expr][expr] */
        rc = put(b, idents[andrea_probe_rng_below(r, N_IDENTS)], err) || put(b, "[", err) || put_expr(b, r, depth + 1, err) ||
             put(b, "]", err);
        if (!rc && andrea_probe_rng_below(r, 3) == 0)
            rc = put(b, "[", err) || put_atom(b, r, err) || put(b, "]", err);
        return rc;
    case 2: /* dict: {k: expr, k: expr} */
        n = 1 + (int)andrea_probe_rng_below(r, 3);
        rc = put(b, "{", err);
        for (int k = 0; k < n && !rc; k++)
            rc = (k && put(b, ", ", err)) || put(b, idents[andrea_probe_rng_below(r, N_IDENTS)], err) || put(b, ": ", err) ||
                 put_expr(b, r, depth + 1, err);
        return rc || put(b, "}", err);
    case 3: /* parenthesized binary: (expr op expr) */
        return put(b, "(", err) || put_expr(b, r, depth + 1, err) || put(b, " ", err) ||
               put(b, binops[andrea_probe_rng_below(r, N_BINOPS)], err) || put(b, " ", err) || put_expr(b, r, depth + 1, err) ||
               put(b, ")", err);
    case 4: /* list: [expr, expr] */
        n = 2 + (int)andrea_probe_rng_below(r, 2);
        rc = put(b, "[", err);
        for (int k = 0; k < n && !rc; k++) rc = (k && put(b, ", ", err)) || put_expr(b, r, depth + 1, err);
        return rc || put(b, "]", err);
    case 5: /* method chain: a.f(expr).g[expr] */
        return put(b, idents[andrea_probe_rng_below(r, N_IDENTS)], err) || put(b, ".", err) ||
               put(b, idents[andrea_probe_rng_below(r, N_IDENTS)], err) || put(b, "(", err) || put_expr(b, r, depth + 1, err) ||
               put(b, ")", err);
    default:
        return put_atom(b, r, err);
    }
}

static int put_statement(andrea_buf *b, probe_rng *r, int depth, ae_error *err) {
    uint32_t kind = andrea_probe_rng_below(r, depth >= 2 ? 3 : 5);
    switch (kind) {
    case 0:
        return put(b, idents[andrea_probe_rng_below(r, N_IDENTS)], err) || put(b, " = ", err) || put_expr(b, r, 0, err) ||
               put(b, ";\n", err);
    case 1:
        return put(b, "return ", err) || put_expr(b, r, 0, err) || put(b, ";\n", err);
    case 2:
        return put_expr(b, r, 0, err) || put(b, ";\n", err);
    case 3:
        return put(b, "if (", err) || put_expr(b, r, 1, err) || put(b, ") {\n", err) ||
               put_statement(b, r, depth + 1, err) || put_statement(b, r, depth + 1, err) || put(b, "}\n", err);
    default:
        return put(b, "for (i = 0; i < ", err) || put_expr(b, r, 2, err) || put(b, "; i++) {\n", err) ||
               put_statement(b, r, depth + 1, err) || put(b, "}\n", err);
    }
}

int andrea_probe_gen_code(const probe_class *c, const probe_gen *g, probe_suite *s, ae_error *err) {
    const andrea_tokenizer *tok = g->tok;
    int seq_len = g->seq_len;
    probe_rng *r = g->rng;
    andrea_buf text = {0};
    int rc = 0;
    for (int i = 0; i < s->n_items && !rc; i++) {
        text.len = 0;
        ptext tt = {0};
        /* Grow the code until it tokenizes to at least seq_len tokens (or a hard byte cap). */
        size_t want = (size_t)seq_len * 2;
        for (;;) {
            while (!rc && text.len < want) rc = put_statement(&text, r, 0, err);
            if (rc) break;
            andrea_ptext_free(&tt);
            if ((rc = encode_window(tok, andrea_tokenizer_bos(tok), &text, seq_len, &tt, err))) break;
            if (tt.n >= seq_len || text.len > (size_t)seq_len * 64) break;
            want = text.len * 2;
        }
        if (!rc) rc = item_from_tok_text(&s->items[i], &tt, err);
        /* The class's rule on the kept tokens (as for a probe-file item): a bracket whose closer
         * was cut off gives no targets. */
        if (!rc) rc = andrea_probe_default_targets(c->name, &s->items[i], tok, err);
        andrea_ptext_free(&tt);
    }
    andrea_buf_free(&text);
    return rc ? -1 : 0;
}

/* ---------------- entity: people and places ---------------- */

/* Entity stories are chains: every sentence starts by re-mentioning the most recent entity
 * mention of the sentence before (a person or a place), so the most recent mention is exactly
 * what a position needs to look back to. Q = another person of the item's cast, L = a place of
 * the cast (not the subject). */
static const char *const person_preds[] = {
    " met Q",  " moved to L", " wrote a long letter to Q", " walked through L", " thanked Q for the map",
    " told Q about the winter", " was born in L", " waited for the train",
};
static const char *const place_preds[] = {
    " welcomed Q", " was quiet that winter", " is near L", " was where Q kept the old books",
    " reminded Q of home",
};
static const char *const fillers[] = {"", " last year", " at dawn", " with great care", ""};
static const char *const connectors[] = {". ", ", so ", ". Later, ", ", and then "};
#define N_OF(a) (uint32_t)(sizeof(a) / sizeof(a)[0])

typedef struct {
    size_t start, end;
} char_span;

typedef struct {
    int is_place, idx; /* the subject: cast person idx (0..2) or cast place idx (0..1) */
} entity_ref;

static int put_name(andrea_buf *text, const char *name, char_span **spans, int *n_spans, size_t *span_cap,
                    ae_error *err) {
    if (andrea_grow(spans, span_cap, (size_t)*n_spans + 1, sizeof **spans, 64))
        return andrea_fail(err, "entity: out of memory");
    (*spans)[*n_spans].start = text->len;
    if (andrea_probe_text_adds(text, name, err)) return -1;
    (*spans)[(*n_spans)++].end = text->len;
    return 0;
}

/* Appends "SUBJECT predicate filler connector", recording the character span of every name, and
 * moves *subj to the last entity the sentence mentioned. */
static int put_entity_sentence(andrea_buf *text, probe_rng *r, char **people, const int cast_p[3], char **places,
                               const int cast_l[2], entity_ref *subj, char_span **spans, int *n_spans,
                               size_t *span_cap, ae_error *err) {
    const char *sname = subj->is_place ? places[cast_l[subj->idx]] : people[cast_p[subj->idx]];
    if (put_name(text, sname, spans, n_spans, span_cap, err)) return -1;
    const char *pred = subj->is_place ? place_preds[andrea_probe_rng_below(r, N_OF(place_preds))]
                                      : person_preds[andrea_probe_rng_below(r, N_OF(person_preds))];
    entity_ref next = *subj;
    for (const char *c = pred; *c; c++) {
        if (*c == 'Q') {
            int q = (int)andrea_probe_rng_below(r, 3);
            if (!subj->is_place && q == subj->idx) q = (q + 1 + (int)andrea_probe_rng_below(r, 2)) % 3;
            if (put_name(text, people[cast_p[q]], spans, n_spans, span_cap, err)) return -1;
            next.is_place = 0;
            next.idx = q;
        } else if (*c == 'L') {
            int l = subj->is_place ? 1 - subj->idx : (int)andrea_probe_rng_below(r, 2);
            if (put_name(text, places[cast_l[l]], spans, n_spans, span_cap, err)) return -1;
            next.is_place = 1;
            next.idx = l;
        } else if (andrea_probe_text_add(text, c, 1, err)) {
            return -1;
        }
    }
    if (andrea_probe_text_adds(text, fillers[andrea_probe_rng_below(r, N_OF(fillers))], err) ||
        andrea_probe_text_adds(text, connectors[andrea_probe_rng_below(r, N_OF(connectors))], err))
        return -1;
    *subj = next;
    return 0;
}

int andrea_probe_gen_entity(const probe_class *c, const probe_gen *g, probe_suite *s, ae_error *err) {
    const andrea_tokenizer *tok = g->tok;
    int seq_len = g->seq_len;
    probe_rng *r = g->rng;
    char *pstore = NULL, *lstore = NULL;
    char **people = NULL, **places = NULL;
    int n_people, n_places;
    if (read_name_list("people.txt", &pstore, &people, &n_people, err)) return -1;
    if (read_name_list("places.txt", &lstore, &places, &n_places, err)) {
        free(people);
        free(pstore);
        return -1;
    }
    andrea_buf text = {0};
    char_span *spans = NULL;
    int *tspans = NULL;
    size_t span_cap = 0;
    int rc = 0;
    for (int i = 0; i < s->n_items && !rc; i++) {
        /* A small cast per item (3 people, 2 places) so that names are re-mentioned. */
        int cast_p[3], cast_l[2];
        for (int k = 0; k < 3; k++) {
            int dup;
            do {
                cast_p[k] = (int)andrea_probe_rng_below(r, (uint32_t)n_people);
                dup = 0;
                for (int j = 0; j < k; j++) dup |= cast_p[j] == cast_p[k];
            } while (dup);
        }
        cast_l[0] = (int)andrea_probe_rng_below(r, (uint32_t)n_places);
        do cast_l[1] = (int)andrea_probe_rng_below(r, (uint32_t)n_places);
        while (cast_l[1] == cast_l[0]);

        text.len = 0;
        int n_spans = 0;
        ptext tt = {0};
        entity_ref subj = {0, (int)andrea_probe_rng_below(r, 3)};
        size_t want = (size_t)seq_len * 2;
        for (;;) {
            while (!rc && text.len < want)
                rc = put_entity_sentence(&text, r, people, cast_p, places, cast_l, &subj, &spans, &n_spans, &span_cap,
                                         err);
            if (rc) break;
            andrea_ptext_free(&tt);
            if ((rc = encode_window(tok, andrea_tokenizer_bos(tok), &text, seq_len, &tt, err))) break;
            if (tt.n >= seq_len || text.len > (size_t)seq_len * 64) break;
            want = text.len * 2; /* not enough tokens yet: more sentences, re-tokenize */
        }
        if (rc) {
            andrea_ptext_free(&tt);
            break;
        }
        probe_item *it = &s->items[i];
        if ((rc = item_from_tok_text(it, &tt, err))) {
            andrea_ptext_free(&tt);
            break;
        }
        /* Map character spans to token spans; mentions cut off by the length limit are dropped. */
        free(tspans);
        tspans = malloc((size_t)(n_spans > 0 ? n_spans : 1) * 2 * sizeof(int));
        if (!tspans) {
            rc = andrea_fail(err, "entity: out of memory");
            andrea_ptext_free(&tt);
            break;
        }
        int m = 0;
        for (int k = 0; k < n_spans; k++) {
            int t0, t1;
            if (andrea_ptext_span(&tt, spans[k].start, spans[k].end, &t0, &t1)) continue;
            tspans[2 * m] = t0;
            tspans[2 * m + 1] = t1;
            m++;
        }
        it->entities = malloc((size_t)(m > 0 ? m : 1) * 2 * sizeof(int));
        if (!it->entities) {
            rc = andrea_fail(err, "entity: out of memory");
            andrea_ptext_free(&tt);
            break;
        }
        memcpy(it->entities, tspans, (size_t)m * 2 * sizeof(int));
        it->n_entities = m;
        rc = andrea_probe_default_targets(c->name, it, tok, err);
        andrea_ptext_free(&tt);
    }
    free(tspans);
    free(spans);
    andrea_buf_free(&text);
    free(people);
    free(places);
    free(pstore);
    free(lstore);
    return rc ? -1 : 0;
}

/* ---------------- dispatch ---------------- */

int andrea_probe_suite_builtin(const char *name, const andrea_tokenizer *tok, int vocab_size, int max_seq_len,
                        const probe_options *opt, probe_suite *out, ae_error *err) {
    memset(out, 0, sizeof *out);
    const probe_class *c = andrea_probe_class_find(name);
    if (!c) {
        char list[512] = "";
        for (int i = 0; andrea_probe_classes[i].name; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", andrea_probe_classes[i].name);
        return andrea_fail(err, "%s: not a built-in probe suite (built-in: %s)", name, list);
    }
    if (!tok) return andrea_fail(err, "%s: built-in suites need a tokenizer", name);
    int n_items = opt && opt->n_items > 0 ? opt->n_items : c->n_items > 0 ? c->n_items : PROBE_DEFAULT_N_ITEMS;
    int seq_len = opt && opt->seq_len > 0 ? opt->seq_len : c->seq_len > 0 ? c->seq_len : PROBE_DEFAULT_SEQ_LEN;
    uint64_t seed = opt && opt->seed ? opt->seed : PROBE_DEFAULT_SEED;
    if (n_items > PROBE_MAX_ITEMS) return andrea_fail(err, "%s: %d items asked for, at most %d", name, n_items, PROBE_MAX_ITEMS);
    if (seq_len > max_seq_len) seq_len = max_seq_len;
    if (seq_len < 5) return andrea_fail(err, "%s: items need at least 5 tokens, the model allows %d", name, seq_len);

    snprintf(out->name, sizeof out->name, "%s", name);
    snprintf(out->source, sizeof out->source, "builtin");
    out->seed = seed;
    out->items = calloc((size_t)n_items, sizeof *out->items);
    if (!out->items) return andrea_fail(err, "%s: out of memory for %d items", name, n_items);
    out->n_items = n_items;

    probe_rng r;
    /* classes naming another's stream (duplicate: induction's) get the same sequences */
    andrea_probe_rng_seed(&r, seed, c->stream ? c->stream : name);
    probe_gen g = {tok, vocab_size, seq_len, &r};
    if (c->generate(c, &g, out, err)) {
        andrea_probe_suite_free(out);
        return -1;
    }
    for (int i = 0; i < out->n_items; i++) {
        if (out->items[i].n_tokens > out->max_len) out->max_len = out->items[i].n_tokens;
        if (out->items[i].n_tokens < 1) {
            andrea_probe_suite_free(out);
            return andrea_fail(err, "%s: generated an empty item (tokenizer produced no tokens)", name);
        }
    }
    return 0;
}

int andrea_probe_suites_builtin_list(const char *names, const andrea_tokenizer *tok, int vocab_size,
                              int max_seq_len, const probe_options *opt, probe_suite **suites,
                              int *n_suites, ae_error *err) {
    *suites = NULL;
    *n_suites = 0;
    char list[1024];
    if (!names || !*names || !strcmp(names, "all")) {
        /* no list: the default suites; "all": every class, the opt-in ones too */
        list[0] = 0;
        for (int i = 0; andrea_probe_classes[i].name; i++) {
            if (andrea_probe_classes[i].opt_in && (!names || strcmp(names, "all"))) continue;
            strcat(list, list[0] ? "," : "");
            strcat(list, andrea_probe_classes[i].name);
        }
    } else {
        if (strlen(names) >= sizeof list) return andrea_fail(err, "suite list too long");
        strcpy(list, names);
    }
    /* "bos," or "bos,,induction": an empty name, most likely an unset shell variable ("bos,$X") */
    const size_t len = strlen(list);
    if (len && (list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,")))
        return andrea_fail(err, "--probes '%.200s' has an empty suite name (an unset variable?): name each suite", list);
    int cap = 1;
    for (const char *c = list; *c; c++) cap += *c == ',';
    probe_suite *arr = calloc((size_t)cap, sizeof *arr);
    if (!arr) return andrea_fail(err, "out of memory");
    int n = 0;
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        for (int j = 0; j < n; j++) {
            if (!strcmp(arr[j].name, name)) {
                andrea_probe_suites_free(arr, n);
                return andrea_fail(err, "%s: suite named twice", name);
            }
        }
        if (andrea_probe_suite_builtin(name, tok, vocab_size, max_seq_len, opt, &arr[n], err)) {
            andrea_probe_suites_free(arr, n);
            return -1;
        }
        n++;
    }
    if (n == 0) {
        free(arr);
        return andrea_fail(err, "empty suite list");
    }
    *suites = arr;
    *n_suites = n;
    return 0;
}
