/* ordinals.c — the ordinal kinds' parser (see ordinals.h). */
#include "ordinals.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define ORDINALS_MAX_BYTES (1u << 20)
#define ORDINALS_MAX_ITEMS 4096 /* in the whole file: a kind is a few dozen; bounds every buffer below */



void andrea_ordinals_free(andrea_ordinals *o) {
    free(o->tok);
    free(o->start);
    free(o->pair_start);
    free(o->pair);
    free(o->item);
    free(o->item_len);
    free(o->pos);
    free(o->stamp);
    free(o->where);
    memset(o, 0, sizeof *o);
}

static int ordinals_alloc(andrea_ordinals *o, int V) {
    const size_t n = ORDINALS_MAX_ITEMS;
    memset(o, 0, sizeof *o);
    o->tok = malloc(sizeof(int) * n);
    o->start = calloc(n + 1, sizeof(int));
    o->pair_start = calloc(n + 1, sizeof(int));
    o->pair = malloc(sizeof(int) * 2 * n);
    o->item = malloc(sizeof(char *) * n);
    o->item_len = malloc(sizeof(int) * n);
    o->pos = malloc(sizeof(int) * n);
    o->stamp = malloc(sizeof(int) * (size_t)V);
    o->where = malloc(sizeof(int) * (size_t)V);
    if (!o->tok || !o->start || !o->pair_start || !o->pair || !o->item || !o->item_len || !o->pos || !o->stamp ||
        !o->where)
        return -1;
    for (int i = 0; i < V; i++) o->stamp[i] = 0; /* lines count from 1 */
    return 0;
}

/* The token of one item, or -1 when the model's tokenizer makes it anything but one token
 * below V (ids of a tokenizer meant for a larger vocabulary are dropped, not trusted). */
static int single_token(const andrea_tokenizer *tok, int V, const char *s, int len, ae_error *err, int *id) {
    int *ids = NULL, n = 0;
    if (andrea_tokenizer_encode(tok, s, (size_t)len, &ids, NULL, &n, err)) return -1;
    *id = n == 1 && ids[0] >= 0 && ids[0] < V ? ids[0] : -1;
    free(ids);
    return 0;
}

/* Splits "item item ..." into o->item (NUL-terminated in place, then decoded: a leading '_' is a
 * space, a leading "\_" a literal '_'). 0, or -1 with "PATH:LINE: problem". */
static int split_items(andrea_ordinals *o, char *s, int *n, const char *path, int ln, ae_error *err) {
    *n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s) break;
        char *b = s;
        while (*s && *s != ' ' && *s != '\t') s++;
        if (*s) *s++ = 0;
        if (o->n_items + *n >= ORDINALS_MAX_ITEMS)
            return andrea_fail(err, "%s:%d: more than %d items in the file", path, ln, ORDINALS_MAX_ITEMS);
        if (b[0] == '_') b[0] = ' ';
        else if (b[0] == '\\' && b[1] == '_') b++;
        o->item[*n] = b;
        o->item_len[*n] = (int)strlen(b);
        (*n)++;
    }
    if (*n == 0) return andrea_fail(err, "%s:%d: a kind with no items", path, ln);
    return 0;
}

/* Adds the kind on line ln (its items already split): its distinct surviving tokens and its
 * pairs of consecutive surviving items; a kind of fewer than 3 tokens (or no pair) leaves no
 * trace. A last item equal to the first closes a cycle instead of being a token again. */
static int add_kind(andrea_ordinals *o, int n, const andrea_tokenizer *tok, int V, int ln, ae_error *err) {
    const int wrap = n >= 3 && o->item_len[0] == o->item_len[n - 1] &&
                     !memcmp(o->item[0], o->item[n - 1], (size_t)o->item_len[0]);
    if (wrap) n--;
    const int k = o->n_kinds, t0 = o->n_tok, p0 = o->n_pairs;
    for (int i = 0; i < n; i++) {
        int id;
        if (single_token(tok, V, o->item[i], o->item_len[i], err, &id)) return -1;
        if (id < 0) {
            o->pos[i] = -1;
        } else if (o->stamp[id] == ln) { /* the same token twice in one kind: one candidate */
            o->pos[i] = o->where[id];
        } else {
            o->stamp[id] = ln;
            o->where[id] = o->n_tok;
            o->tok[o->n_tok++] = id;
            o->pos[i] = o->where[id];
        }
    }
    o->n_items += n + wrap;
    for (int i = 0; i + 1 < n + wrap; i++) {
        const int a = o->pos[i], b = o->pos[(i + 1) % n];
        if (a < 0 || b < 0 || a == b) continue; /* a gap (a dropped item) breaks the chain */
        o->pair[2 * o->n_pairs] = a - t0;
        o->pair[2 * o->n_pairs + 1] = b - t0;
        o->n_pairs++;
    }
    if (o->n_tok - t0 < 3 || o->n_pairs == p0) { /* too few tokens left to rank among */
        o->n_tok = t0;
        o->n_pairs = p0;
        return 0;
    }
    o->start[k + 1] = o->n_tok;
    o->pair_start[k + 1] = o->n_pairs;
    o->n_kinds++;
    return 0;
}

/* One line "name: item item ...". */
static int parse_line(andrea_ordinals *o, char *line, const andrea_tokenizer *tok, int V, const char *path, int ln,
                      ae_error *err) {
    char *colon = strchr(line, ':');
    if (!colon) return andrea_fail(err, "%s:%d: expected 'name: item item ...'", path, ln);
    char *e = colon;
    while (e > line && (e[-1] == ' ' || e[-1] == '\t')) e--;
    const long name_len = e - line;
    int ok = name_len >= 1 && name_len <= 63;
    for (const char *c = line; ok && c < e; c++)
        ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-';
    if (!ok) return andrea_fail(err, "%s:%d: a kind's name is 1-63 letters, digits, '_' or '-'", path, ln);
    int n;
    if (split_items(o, colon + 1, &n, path, ln, err)) return -1;
    return add_kind(o, n, tok, V, ln, err);
}

int andrea_ordinals_load(const andrea_tokenizer *tok, int V, andrea_ordinals *o, ae_error *err) {
    memset(o, 0, sizeof *o);
    char dir[4096], path[4096 + 64];
    if (andrea_probe_data_dir(dir, sizeof dir, err)) return -1;
    int w = snprintf(path, sizeof path, "%s/%s", dir, ANDREA_ORDINALS_FILE);
    if (w < 0 || (size_t)w >= sizeof path) return andrea_fail(err, "%s: probe data path too long", dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return andrea_fail(err,
                           "%s: cannot open the ordinal kinds (%s; set ANDREA_PROBE_DATA to the probes/data folder)",
                           path, strerror(errno));
    char *text = malloc(ORDINALS_MAX_BYTES + 1);
    size_t len = text ? fread(text, 1, ORDINALS_MAX_BYTES + 1, f) : 0;
    const int bad = !text || ferror(f);
    fclose(f);
    if (bad || len > ORDINALS_MAX_BYTES || memchr(text, 0, len)) {
        free(text);
        return andrea_fail(err, "%s: %s", path,
                           !text ? "out of memory" : bad ? "read error" : len > ORDINALS_MAX_BYTES ? "larger than 1 MiB"
                                                                                                 : "holds a NUL byte");
    }
    text[len] = 0;
    int rc = ordinals_alloc(o, V) ? andrea_fail(err, "%s: out of memory", path) : 0;
    int ln = 0;
    for (char *p = text, *nl; !rc && p < text + len; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl) nl = text + len;
        *nl = 0;
        ln++;
        char *e = nl;
        while (e > p && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) *--e = 0;
        while (*p == ' ' || *p == '\t') p++;
        if (*p && *p != '#') rc = parse_line(o, p, tok, V, path, ln, err);
    }
    free(text);
    if (rc) {
        andrea_ordinals_free(o);
        return -1;
    }
    double sum = 0;
    for (int k = 0; k < o->n_kinds; k++)
        sum += (double)(o->pair_start[k + 1] - o->pair_start[k]) / (o->start[k + 1] - o->start[k]);
    o->chance = o->n_pairs ? sum / o->n_pairs : NAN;
    return 0;
}

int andrea_ordinals_none(andrea_ordinals *o) {
    if (!ordinals_alloc(o, 1)) return 0;
    andrea_ordinals_free(o);
    return -1;
}
