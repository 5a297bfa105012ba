/* tokenizer_bpe.c — GPT-2 byte-level BPE: vocab.json + merges.txt, GPT-2's pre-tokenizer.
 *
 * Job: encode text exactly as OpenAI's gpt-2/src/encoder.py does, on bytes.
 *   1. Pre-tokenize with GPT-2's pattern, run by PCRE2 in UTF + UCP mode (so \p{L}, \p{N} and \s
 *      are Unicode classes, as in Python's `regex` module; GPT2_PATTERN says why \s is spelled out).
 *   2. Each piece's UTF-8 bytes start as one symbol per byte; BPE repeatedly takes the adjacent
 *      pair of lowest merge rank and merges ALL its occurrences left to right (one "round"), until
 *      no adjacent pair has a rank.
 * Invalid UTF-8: PCRE2_MATCH_INVALID_UTF makes the pattern never match an invalid sequence, so
 * such bytes fall between matches; each maximal run of them becomes a piece of its own and is
 * BPE'd as bytes. Every byte of the input is thus covered exactly once (decode(encode(x)) == x for
 * any byte string) and valid UTF-8 text is encoded exactly as GPT-2 would.
 * Invariants after load:
 *   - every vocab id is unique and < vocab_size; every token is 1..ANDREA_TOKEN_MAX_BYTES bytes,
 *     written in GPT-2's byte-to-unicode alphabet, stored here decoded to raw bytes;
 *   - all 256 single-byte tokens exist (so every text encodes), and every merge's two halves and
 *     their concatenation are vocabulary tokens (so BPE can work on ids throughout);
 *   - merge ranks are line order; no pair is listed twice.
 * Failure contract: load returns NULL with "FILE: problem" or "FILE:LINE: problem"; encode fails
 * only on allocation or PCRE2 errors. The tokenizer is read-only after load, so concurrent encodes
 * are safe (each call owns its match data and scratch).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>
#include <pcre2.h>

#include "../common/buf.h"
#include "../common/checked_size.h"
#include "../common/strict_input.h"
#include "tokenizer_impl.h"

/* vocab.json of GPT-2 is 1 MB; a file 64 times larger is not a tokenizer we can use. */
#define VOCAB_JSON_MAX (64u * 1024u * 1024u)
/* A merges.txt line longer than this is malformed (GPT-2's longest is under 150 bytes). */
#define MERGES_LINE_MAX 4096
/* GPT-2's merges.txt is 456 KB; like vocab.json, a file 64 MB large is not one we can use (and
 * the merge table grows with the file, so the file size bounds the memory). */
#define MERGES_TXT_MAX (64u * 1024u * 1024u)

/* GPT-2's pattern, 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+,
 * with one correction: PCRE2's UCP \s also matches U+180E (MONGOLIAN VOWEL SEPARATOR, part of
 * its \h list), which stopped being White_Space in Unicode 6.3 and is not \s for Python's `regex`
 * module that GPT-2 ran. So \s is written [^\S\x{180E}], \S is [\S\x{180E}], and U+180E joins
 * the "other symbols" run. Otherwise PCRE2's UCP \s is exactly Unicode White_Space. */
static const char GPT2_PATTERN[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?(?:[^\\s\\p{L}\\p{N}]|\\x{180E})+"
    "|[^\\S\\x{180E}]+(?![\\S\\x{180E}])|[^\\S\\x{180E}]+";

/* ---- open-addressing hash tables (linear probing, power-of-two capacity, load <= 1/2) ---- */

static uint64_t hash_bytes(const char *s, size_t n) { /* FNV-1a, then a final mix */
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static uint64_t hash_u64(uint64_t x) { /* splitmix64 finaliser */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static size_t table_cap_for(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n + 2) cap *= 2;
    return cap;
}

typedef struct {
    uint64_t key; /* (left id << 32) | right id; EMPTY_PAIR when the slot is free */
    uint32_t rank;
    int32_t merged; /* id of the concatenation */
} pair_slot;
#define EMPTY_PAIR UINT64_MAX

struct tok_bpe {
    int vocab_size;
    int n_ids; /* 1 + the largest id in vocab.json (<= vocab_size): entries of tok_off/tok_len */
    /* Per id: its bytes are pool[tok_off[id] .. tok_off[id] + tok_len[id]); tok_len -1: no token. */
    size_t *tok_off;
    int32_t *tok_len;
    char *pool;
    /* bytes -> id: slots hold id + 1 (0 = free) */
    int32_t *str_slots;
    size_t str_cap;
    pair_slot *pairs;
    size_t pair_cap;
    int byte_id[256]; /* id of the token that is byte b alone */
    pcre2_code *re;
};

static int str_lookup(const tok_bpe *b, const char *s, size_t n) {
    size_t mask = b->str_cap - 1, i = (size_t)hash_bytes(s, n) & mask;
    for (;; i = (i + 1) & mask) {
        int32_t v = b->str_slots[i];
        if (!v) return -1;
        int id = v - 1;
        if ((size_t)b->tok_len[id] == n && memcmp(b->pool + b->tok_off[id], s, n) == 0) return id;
    }
}

/* Inserts id (whose bytes are already in the pool); returns the id already holding those bytes,
 * or -1 when they were new. */
static int str_insert(tok_bpe *b, int id) {
    const char *s = b->pool + b->tok_off[id];
    size_t n = (size_t)b->tok_len[id], mask = b->str_cap - 1, i = (size_t)hash_bytes(s, n) & mask;
    for (;; i = (i + 1) & mask) {
        int32_t v = b->str_slots[i];
        if (!v) {
            b->str_slots[i] = id + 1;
            return -1;
        }
        int other = v - 1;
        if ((size_t)b->tok_len[other] == n && memcmp(b->pool + b->tok_off[other], s, n) == 0)
            return other;
    }
}

static const pair_slot *pair_lookup(const tok_bpe *b, int left, int right) {
    uint64_t key = ((uint64_t)(uint32_t)left << 32) | (uint32_t)right;
    size_t mask = b->pair_cap - 1, i = (size_t)hash_u64(key) & mask;
    for (;; i = (i + 1) & mask) {
        if (b->pairs[i].key == EMPTY_PAIR) return NULL;
        if (b->pairs[i].key == key) return &b->pairs[i];
    }
}

/* ---- GPT-2's byte <-> unicode alphabet ---- */

/* bytes_to_unicode() of encoder.py: printable Latin-1 bytes stand for themselves, the other 68
 * bytes map to U+0100.. in byte order. unicode_to_byte inverts it (-1: not in the alphabet). */
static void gpt2_alphabet(int byte_to_cp[256], int cp_to_byte[324]) {
    for (int i = 0; i < 324; i++) cp_to_byte[i] = -1;
    int n = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        byte_to_cp[b] = printable ? b : 256 + n++;
        cp_to_byte[byte_to_cp[b]] = b;
    }
}

/* Decodes one UTF-8 sequence at s[0..n); returns its length and stores the code point, or 0 for
 * an invalid sequence. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    if (n == 0) return 0;
    unsigned c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

/* Decodes a token written in GPT-2's alphabet (UTF-8) into raw bytes at out (room for n bytes:
 * decoding never lengthens). Returns the byte count, or -1 with *bad_cp set to the offending
 * code point (UINT32_MAX for invalid UTF-8). */
static long alphabet_decode(const char *s, size_t n, const int cp_to_byte[324], char *out,
                            uint32_t *bad_cp) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, o = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_decode(u + i, n - i, &cp);
        if (!k) {
            *bad_cp = UINT32_MAX;
            return -1;
        }
        if (cp >= 324 || cp_to_byte[cp] < 0) {
            *bad_cp = cp;
            return -1;
        }
        out[o++] = (char)cp_to_byte[cp];
        i += k;
    }
    return (long)o;
}

/* A short, printable rendering of a token for error messages (JSON-style escapes, truncated). */
static const char *show(const char *s, size_t n, char *buf, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (o + 8 >= cap) { /* room left for "..." and the terminator */
            o += (size_t)snprintf(buf + o, cap - o, "...");
            break;
        }
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            o += (size_t)snprintf(buf + o, cap - o, "\\%c", c);
        else if (c < 0x20 || c == 0x7F)
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o] = 0;
    return buf;
}

static void describe_cp(uint32_t cp, char *buf, size_t cap) {
    if (cp == UINT32_MAX)
        snprintf(buf, cap, "invalid UTF-8");
    else
        snprintf(buf, cap, "character U+%04X, which is outside GPT-2's byte alphabet", (unsigned)cp);
}

/* ---- loading ---- */

void andrea_tok_bpe_free(tok_bpe *b) {
    if (!b) return;
    free(b->tok_off);
    free(b->tok_len);
    free(b->pool);
    free(b->str_slots);
    free(b->pairs);
    pcre2_code_free(b->re);
    free(b);
}

/* PCRE2's one check helper: formats "CALL failed at FILE:LINE: message". */
static int pcre2_fail(ae_error *err, const char *call, int code, const char *file, int line) {
    PCRE2_UCHAR msg[256];
    if (pcre2_get_error_message(code, msg, sizeof msg) < 0) snprintf((char *)msg, sizeof msg, "code %d", code);
    return andrea_fail(err, "%s failed at %s:%d: %s", call, file, line, (const char *)msg);
}
#define PCRE2_FAIL(err, call, code) pcre2_fail(err, call, code, AE_SOURCE_FILE, __LINE__)

static char *slurp(const char *path, size_t max, size_t *len, ae_error *err) {
    FILE *f = andrea_fopen_regular(path, err);
    if (!f) return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size < 0) {
        andrea_fail(err, "%s: cannot stat: %s", path, strerror(errno));
        fclose(f);
        return NULL;
    }
    if ((uint64_t)st.st_size > max) {
        andrea_fail(err, "%s: %lld bytes, larger than the %zu a vocabulary may have", path,
                (long long)st.st_size, max);
        fclose(f);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        andrea_fail(err, "%s: cannot allocate %zu bytes", path, n + 1);
        fclose(f);
        return NULL;
    }
    if (fread(buf, 1, n, f) != n) {
        andrea_fail(err, "%s: read failed", path);
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

static int line_of(const char *text, size_t off) {
    int line = 1;
    for (size_t i = 0; i < off; i++) line += text[i] == '\n';
    return line;
}

/* First pass over vocab.json: every id valid, and the table sizes they imply (ids index the
 * tables, so they are sized by the largest id, not by the model's vocab_size). */
static int vocab_table_sizes(const tok_bpe *b, const cJSON *root, const char *path, size_t *n_ids_out,
                             size_t *pool_bytes_out, ae_error *err) {
    size_t n_ids = 0, pool_bytes = 0;
    char shown[96];
    const cJSON *item;
    cJSON_ArrayForEach(item, root) {
        const char *key = item->string;
        size_t klen = strlen(key);
        if (!cJSON_IsNumber(item))
            return andrea_fail(err, "%s: token \"%s\" has a value that is not an id number", path,
                           show(key, klen, shown, sizeof shown));
        double idv = item->valuedouble;
        if (!(idv >= 0 && idv < (double)b->vocab_size))
            return andrea_fail(err, "%s: token \"%s\" has id %g, outside 0..%d (the model's vocab_size is %d)",
                           path, show(key, klen, shown, sizeof shown), idv, b->vocab_size - 1, b->vocab_size);
        /* written as digits: 260.0 is a float to Python's json and refused by Hugging Face's tokenizers */
        if (idv != (double)(int)idv || !andrea_json_is_digits_only(item))
            return andrea_fail(err, "%s: token \"%s\" has id %g, which is not an integer written as digits", path,
                           show(key, klen, shown, sizeof shown), idv);
        if ((size_t)idv + 1 > n_ids) n_ids = (size_t)idv + 1;
        if (ae_add(pool_bytes, klen, &pool_bytes)) return andrea_fail(err, "%s: token sizes overflow", path);
    }
    *n_ids_out = n_ids;
    *pool_bytes_out = pool_bytes;
    return 0;
}

static int load_vocab(tok_bpe *b, const char *path, const int cp_to_byte[324], int *bos, ae_error *err) {
    size_t len;
    char *text = slurp(path, VOCAB_JSON_MAX, &len, err);
    if (!text) return -1;
    /* strict (strict_input.h): data after the object or a \u0000 in a token is refused;
     * keys given twice are left to the check below, which names both ids */
    char why0[160];
    size_t off;
    cJSON *root = andrea_json_parse_strict(text, len, 0, &off, why0, sizeof why0);
    if (!root) {
        if (off != SIZE_MAX)
            andrea_fail(err, "%s:%d: not valid JSON (near byte %zu)", path, line_of(text, off), off);
        else
            andrea_fail(err, "%s: %s", path, why0);
        free(text);
        return -1;
    }
    free(text);
    int rc = -1;
    char shown[96], why[96];
    if (!cJSON_IsObject(root)) {
        andrea_fail(err, "%s: not a JSON object mapping token strings to ids", path);
        goto out;
    }
    int count = cJSON_GetArraySize(root);
    if (count <= 0) {
        andrea_fail(err, "%s: holds no tokens", path);
        goto out;
    }
    if (count > b->vocab_size) {
        andrea_fail(err, "%s: %d tokens, more than the model's vocab_size %d", path, count, b->vocab_size);
        goto out;
    }
    size_t n_ids = 0, pool_bytes = 0;
    if (vocab_table_sizes(b, root, path, &n_ids, &pool_bytes, err)) goto out;
    const cJSON *item;
    b->n_ids = (int)n_ids;
    b->tok_off = calloc(n_ids, sizeof *b->tok_off);
    b->tok_len = malloc(n_ids * sizeof *b->tok_len);
    b->pool = malloc(pool_bytes + 1);
    b->str_cap = table_cap_for((size_t)count);
    b->str_slots = calloc(b->str_cap, sizeof *b->str_slots);
    if (!b->tok_off || !b->tok_len || !b->pool || !b->str_slots) {
        andrea_fail(err, "%s: cannot allocate the vocabulary", path);
        goto out;
    }
    for (size_t i = 0; i < n_ids; i++) b->tok_len[i] = -1;
    size_t used = 0;
    cJSON_ArrayForEach(item, root) {
        const char *key = item->string;
        size_t klen = strlen(key);
        double idv = item->valuedouble;
        int id = (int)idv;
        if (klen == 0) {
            andrea_fail(err, "%s: id %d has an empty token string", path, id);
            goto out;
        }
        if (b->tok_len[id] >= 0) {
            char other[96];
            andrea_fail(err, "%s: id %d is given to two tokens, \"%s\" and \"%s\"", path, id,
                    show(b->pool + b->tok_off[id], (size_t)b->tok_len[id], other, sizeof other),
                    show(key, klen, shown, sizeof shown));
            goto out;
        }
        uint32_t bad;
        long n = alphabet_decode(key, klen, cp_to_byte, b->pool + used, &bad);
        if (n < 0) {
            describe_cp(bad, why, sizeof why);
            andrea_fail(err, "%s: token \"%s\" (id %d) has %s", path, show(key, klen, shown, sizeof shown),
                    id, why);
            goto out;
        }
        if (n > ANDREA_TOKEN_MAX_BYTES) {
            andrea_fail(err, "%s: token \"%s\" (id %d) is %ld bytes long, more than the %d a token may have",
                    path, show(key, klen, shown, sizeof shown), id, n, ANDREA_TOKEN_MAX_BYTES);
            goto out;
        }
        b->tok_off[id] = used;
        b->tok_len[id] = (int32_t)n;
        used += (size_t)n;
        int dup = str_insert(b, id);
        if (dup >= 0) {
            andrea_fail(err, "%s: token \"%s\" is listed twice (ids %d and %d)", path,
                    show(key, klen, shown, sizeof shown), dup, id);
            goto out;
        }
    }
    for (int c = 0; c < 256; c++) {
        char byte = (char)c;
        b->byte_id[c] = str_lookup(b, &byte, 1);
        if (b->byte_id[c] < 0) {
            andrea_fail(err, "%s: lacks the token for byte 0x%02x, so not every text can be encoded", path, c);
            goto out;
        }
    }
    *bos = str_lookup(b, "<|endoftext|>", 13);
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}

typedef struct {
    int left, right, merged;
} merge_rule;

/* Parses "A B" (exactly one space, both halves non-empty) into ids; fills err with "PATH:LINE: ..." */
static int parse_merge(tok_bpe *b, const char *path, int lineno, char *line, size_t n,
                       const int cp_to_byte[324], merge_rule *rule, ae_error *err) {
    char shown[96], why[96];
    char *space = memchr(line, ' ', n);
    if (!space || space == line || space == line + n - 1 || memchr(space + 1, ' ', (size_t)(line + n - space - 1)))
        return andrea_fail(err, "%s:%d: \"%s\" is not two tokens separated by one space", path, lineno,
                       show(line, n, shown, sizeof shown));
    const char *halves[2] = {line, space + 1};
    size_t lens[2] = {(size_t)(space - line), (size_t)(line + n - space - 1)};
    char raw[2][MERGES_LINE_MAX];
    long rawlen[2];
    int ids[2];
    for (int h = 0; h < 2; h++) {
        uint32_t bad;
        rawlen[h] = alphabet_decode(halves[h], lens[h], cp_to_byte, raw[h], &bad);
        if (rawlen[h] < 0) {
            describe_cp(bad, why, sizeof why);
            return andrea_fail(err, "%s:%d: token \"%s\" has %s", path, lineno,
                           show(halves[h], lens[h], shown, sizeof shown), why);
        }
        ids[h] = str_lookup(b, raw[h], (size_t)rawlen[h]);
        if (ids[h] < 0)
            return andrea_fail(err, "%s:%d: token \"%s\" is not in vocab.json", path, lineno,
                           show(halves[h], lens[h], shown, sizeof shown));
    }
    char joined[2 * MERGES_LINE_MAX];
    memcpy(joined, raw[0], (size_t)rawlen[0]);
    memcpy(joined + rawlen[0], raw[1], (size_t)rawlen[1]);
    int merged = str_lookup(b, joined, (size_t)(rawlen[0] + rawlen[1]));
    if (merged < 0) {
        char whole[MERGES_LINE_MAX + 1];
        memcpy(whole, halves[0], lens[0]);
        memcpy(whole + lens[0], halves[1], lens[1]);
        return andrea_fail(err, "%s:%d: the merged token \"%s\" is not in vocab.json", path, lineno,
                       show(whole, lens[0] + lens[1], shown, sizeof shown));
    }
    rule->left = ids[0];
    rule->right = ids[1];
    rule->merged = merged;
    return 0;
}

/* Reads one line without its '\n', keeping at most cap bytes in line (never growing a buffer
 * with the input, unlike getline); returns the line's full length (above cap: the rest was
 * skipped), or -1 at end of file. *had_newline tells whether a '\n' ended it. */
static long long read_line_bounded(FILE *f, char *line, size_t cap, int *had_newline) {
    long long len = 0;
    int c;
    while ((c = getc(f)) != EOF && c != '\n') {
        if ((size_t)len < cap) line[len] = (char)c;
        len++;
    }
    *had_newline = c == '\n';
    return c == EOF && len == 0 ? -1 : len;
}

static int load_merges(tok_bpe *b, const char *path, const int cp_to_byte[324], ae_error *err) {
    FILE *f = andrea_fopen_regular(path, err);
    if (!f) return -1;
    merge_rule *rules = NULL;
    size_t n_rules = 0, cap_rules = 0;
    /* room for the longest accepted line and a '\r' */
    char *line = malloc(MERGES_LINE_MAX + 1);
    int lineno = 0, rc = -1, had_newline;
    long long got;
    struct stat st;
    if (!line) {
        andrea_fail(err, "%s: cannot allocate a line buffer", path);
        goto out;
    }
    if (fstat(fileno(f), &st) != 0) {
        andrea_fail(err, "%s: cannot stat: %s", path, strerror(errno));
        goto out;
    }
    if ((uint64_t)st.st_size > MERGES_TXT_MAX) {
        andrea_fail(err, "%s: %lld bytes, larger than the %u a merges file may have", path,
                (long long)st.st_size, MERGES_TXT_MAX);
        goto out;
    }
    errno = 0;
    while ((got = read_line_bounded(f, line, MERGES_LINE_MAX + 1, &had_newline)) >= 0) {
        lineno++;
        if (got > MERGES_LINE_MAX + 1) {
            andrea_fail(err, "%s:%d: line of %lld bytes is too long for a merge", path, lineno, got);
            goto out;
        }
        size_t n = (size_t)got;
        if (n > 0 && line[n - 1] == '\r') n--; /* CRLF files: no alphabet token holds a raw \r */
        if (lineno == 1 && n >= 8 && memcmp(line, "#version", 8) == 0) {
            /* a file with bare CR line ends is one line: its merges would all be skipped as the
             * version line, silently, and text tokenized byte by byte */
            if (memchr(line, '\r', n)) {
                andrea_fail(err, "%s:1: the #version line holds a carriage return: bare CR line ends? (merges.txt wants "
                                 "LF or CRLF)", path);
                goto out;
            }
            continue;
        }
        if (n == 0 && !had_newline) break; /* nothing after the last newline */
        if (memchr(line, 0, n)) {
            andrea_fail(err, "%s:%d: holds a NUL byte", path, lineno);
            goto out;
        }
        if (n >= MERGES_LINE_MAX) {
            andrea_fail(err, "%s:%d: line of %zu bytes is too long for a merge", path, lineno, n);
            goto out;
        }
        if (andrea_grow(&rules, &cap_rules, n_rules + 1, sizeof *rules, 1024)) {
            andrea_fail(err, "%s: cannot allocate merges", path);
            goto out;
        }
        if (n_rules >= UINT32_MAX / 2) {
            andrea_fail(err, "%s: too many merges", path);
            goto out;
        }
        if (parse_merge(b, path, lineno, line, n, cp_to_byte, &rules[n_rules], err)) goto out;
        n_rules++;
    }
    if (ferror(f)) {
        andrea_fail(err, "%s: read failed: %s", path, strerror(errno));
        goto out;
    }
    b->pair_cap = table_cap_for(n_rules);
    b->pairs = malloc(b->pair_cap * sizeof *b->pairs);
    if (!b->pairs) {
        andrea_fail(err, "%s: cannot allocate the merge table", path);
        goto out;
    }
    for (size_t i = 0; i < b->pair_cap; i++) b->pairs[i].key = EMPTY_PAIR;
    for (size_t r = 0; r < n_rules; r++) {
        uint64_t key = ((uint64_t)(uint32_t)rules[r].left << 32) | (uint32_t)rules[r].right;
        size_t mask = b->pair_cap - 1, i = (size_t)hash_u64(key) & mask;
        while (b->pairs[i].key != EMPTY_PAIR && b->pairs[i].key != key) i = (i + 1) & mask;
        if (b->pairs[i].key == key) {
            /* encoder.py would silently keep the later rank; a repeated pair is a broken file. */
            char l[96], rr[96];
            andrea_fail(err, "%s: the merge \"%s\" + \"%s\" (rank %zu) is listed twice", path,
                    show(b->pool + b->tok_off[rules[r].left], (size_t)b->tok_len[rules[r].left], l, sizeof l),
                    show(b->pool + b->tok_off[rules[r].right], (size_t)b->tok_len[rules[r].right], rr, sizeof rr),
                    (size_t)b->pairs[i].rank);
            goto out;
        }
        b->pairs[i].key = key;
        b->pairs[i].rank = (uint32_t)r;
        b->pairs[i].merged = rules[r].merged;
    }
    rc = 0;
out:
    free(line);
    free(rules);
    fclose(f);
    return rc;
}

tok_bpe *andrea_tok_bpe_load(const char *vocab_path, const char *merges_path, int vocab_size, int *bos,
                      ae_error *err) {
    tok_bpe *b = calloc(1, sizeof *b);
    if (!b) {
        andrea_fail(err, "cannot allocate a tokenizer");
        return NULL;
    }
    b->vocab_size = vocab_size;
    int byte_to_cp[256], cp_to_byte[324];
    gpt2_alphabet(byte_to_cp, cp_to_byte);
    if (load_vocab(b, vocab_path, cp_to_byte, bos, err) || load_merges(b, merges_path, cp_to_byte, err)) {
        andrea_tok_bpe_free(b);
        return NULL;
    }
    int code;
    PCRE2_SIZE at;
    b->re = pcre2_compile((PCRE2_SPTR)GPT2_PATTERN, PCRE2_ZERO_TERMINATED,
                          PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code, &at, NULL);
    if (!b->re) {
        PCRE2_FAIL(err, "pcre2_compile", code);
        andrea_tok_bpe_free(b);
        return NULL;
    }
    /* JIT is only a speed-up: where the library was built without it, pcre2_match interprets. */
    (void)pcre2_jit_compile(b->re, PCRE2_JIT_COMPLETE);
    return b;
}

/* ---- encoding ---- */

#define JIT_STACK_MAX (8 * 1024 * 1024) /* bytes of JIT stack a match may grow to */

typedef struct {
    uint32_t rank;
    int left, right; /* symbol positions */
    int lid, rid;    /* their ids when the entry was made: a stale entry no longer matches */
} heap_entry;

typedef struct {
    /* per symbol position of the current piece */
    int *id, *prev, *next;
    heap_entry *heap, *deferred;
    size_t n_heap, n_deferred;
} scratch;

static int entry_less(const heap_entry *a, const heap_entry *b) {
    return a->rank != b->rank ? a->rank < b->rank : a->left < b->left;
}

static void heap_push(scratch *s, heap_entry e) {
    size_t i = s->n_heap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!entry_less(&e, &s->heap[p])) break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = e;
}

static heap_entry heap_pop(scratch *s) {
    heap_entry top = s->heap[0], last = s->heap[--s->n_heap];
    size_t i = 0, n = s->n_heap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && entry_less(&s->heap[c + 1], &s->heap[c])) c++;
        if (!entry_less(&s->heap[c], &last)) break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (n) s->heap[i] = last;
    return top;
}

static int entry_valid(const scratch *s, const heap_entry *e) {
    return s->id[e->left] == e->lid && s->next[e->left] == e->right && s->id[e->right] == e->rid;
}

/* Queues the pair starting at symbol position left (if it has a rank). Pairs ranked below the
 * round in progress wait in `deferred` until the round ends: encoder.py merges every occurrence
 * of the round's pair before it looks at pairs the round created. */
static void offer_pair(const tok_bpe *b, scratch *s, int left, long round_rank) {
    int right = s->next[left];
    if (right < 0) return;
    const pair_slot *p = pair_lookup(b, s->id[left], s->id[right]);
    if (!p) return;
    heap_entry e = {p->rank, left, right, s->id[left], s->id[right]};
    if (round_rank >= 0 && (long)p->rank < round_rank)
        s->deferred[s->n_deferred++] = e;
    else
        heap_push(s, e);
}

/* BPE of one piece, bytes p[0..n); appends ids and offsets (base = offset of p in the text). */
static void bpe_piece(const tok_bpe *b, scratch *s, const unsigned char *p, int n, int base, int *ids,
                      int *offsets, int *count) {
    if (n == 1) {
        ids[*count] = b->byte_id[p[0]];
        if (offsets) offsets[*count] = base;
        (*count)++;
        return;
    }
    /* Symbols live at the position of their first byte; a merge keeps the left one alive and
     * unlinks the right one (id -1), so a stale heap entry fails entry_valid. */
    for (int i = 0; i < n; i++) {
        s->id[i] = b->byte_id[p[i]];
        s->prev[i] = i - 1;
        s->next[i] = i + 1 < n ? i + 1 : -1;
    }
    s->n_heap = s->n_deferred = 0;
    for (int i = 0; i + 1 < n; i++) offer_pair(b, s, i, -1);
    long round = -1;
    for (;;) {
        while (s->n_heap && !entry_valid(s, &s->heap[0])) heap_pop(s);
        if (!s->n_heap || (round >= 0 && (long)s->heap[0].rank != round)) {
            if (s->n_deferred) { /* the round is over: what it created competes now */
                for (size_t i = 0; i < s->n_deferred; i++) heap_push(s, s->deferred[i]);
                s->n_deferred = 0;
                round = -1;
                continue;
            }
            if (!s->n_heap) break;
        }
        heap_entry e = heap_pop(s);
        round = e.rank;
        const pair_slot *pr = pair_lookup(b, e.lid, e.rid);
        int l = e.left, r = e.right;
        s->id[l] = pr->merged;
        s->next[l] = s->next[r];
        if (s->next[r] >= 0) s->prev[s->next[r]] = l;
        s->id[r] = -1;
        s->next[r] = -1;
        if (s->prev[l] >= 0) offer_pair(b, s, s->prev[l], round);
        offer_pair(b, s, l, round);
    }
    for (int i = 0; i >= 0; i = s->next[i]) {
        ids[*count] = s->id[i];
        if (offsets) offsets[*count] = base + i;
        (*count)++;
    }
}

int andrea_tok_bpe_encode(const tok_bpe *b, const char *text, size_t len, int *ids, int *offsets, int *n,
                   ae_error *err) {
    *n = 0;
    if (len == 0) return 0;
    /* Scratch for the longest possible piece (the whole text): each merge adds at most two heap
     * entries and one merge happens per removed symbol, so 3 * len entries bound the heap and
     * 2 * len the deferred list. */
    size_t ints, entries, bytes_i, bytes_e, bytes_d;
    if (ae_mul(len, 3, &ints) || ae_mul(len, 3, &entries) || ae_mul(ints, sizeof(int), &bytes_i) ||
        ae_mul(entries, sizeof(heap_entry), &bytes_e) || ae_mul(len, 2 * sizeof(heap_entry), &bytes_d))
        return andrea_fail(err, "text of %zu bytes is too long to tokenize", len);
    scratch s = {0};
    int *ibuf = malloc(bytes_i);
    s.heap = malloc(bytes_e);
    s.deferred = malloc(bytes_d);
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(b->re, NULL);
    /* The JIT's default stack (32 KiB) ends its match of a run of ~1365 punctuation characters
     * ("=====", emoji) with PCRE2_ERROR_JIT_STACKLIMIT: this one grows to JIT_STACK_MAX, and a
     * longer run is matched by the interpreter (PCRE2_NO_JIT), whose backtracking lives on the heap. */
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    pcre2_jit_stack *js = mc ? pcre2_jit_stack_create(32 * 1024, JIT_STACK_MAX, NULL) : NULL;
    if (js) pcre2_jit_stack_assign(mc, NULL, js);
    int rc = -1;
    if (!ibuf || !s.heap || !s.deferred || !md || !mc) {
        andrea_fail(err, "cannot allocate scratch memory to tokenize %zu bytes", len);
        goto out;
    }
    s.id = ibuf;
    s.prev = ibuf + len;
    s.next = ibuf + 2 * len;
    const unsigned char *u = (const unsigned char *)text;
    size_t pos = 0;
    while (pos < len) {
        int m = pcre2_match(b->re, (PCRE2_SPTR)text, len, pos, 0, md, mc);
        if (m == PCRE2_ERROR_JIT_STACKLIMIT) m = pcre2_match(b->re, (PCRE2_SPTR)text, len, pos, PCRE2_NO_JIT, md, mc);
        size_t ms = len, me = len;
        if (m >= 0) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            ms = ov[0];
            me = ov[1];
            if (me <= ms || ms < pos) { /* the pattern cannot match empty; guard the loop anyway */
                andrea_fail(err, "tokenizer: empty pre-token match at byte %zu", ms);
                goto out;
            }
        } else if (m != PCRE2_ERROR_NOMATCH) {
            PCRE2_FAIL(err, "pcre2_match", m);
            goto out;
        }
        if (ms > pos) /* bytes no alternative matches: invalid UTF-8, one piece per run */
            bpe_piece(b, &s, u + pos, (int)(ms - pos), (int)pos, ids, offsets, n);
        if (me > ms) bpe_piece(b, &s, u + ms, (int)(me - ms), (int)ms, ids, offsets, n);
        pos = me;
    }
    rc = 0;
out:
    pcre2_match_data_free(md);
    pcre2_jit_stack_free(js);
    pcre2_match_context_free(mc);
    free(ibuf);
    free(s.heap);
    free(s.deferred);
    return rc;
}

int andrea_tok_bpe_token_bytes(const tok_bpe *b, int id, char *buf, size_t cap) {
    if (id < 0 || id >= b->n_ids || b->tok_len[id] < 0) return -1;
    size_t n = (size_t)b->tok_len[id];
    if (n > cap) n = cap;
    memcpy(buf, b->pool + b->tok_off[id], n);
    return (int)n;
}
