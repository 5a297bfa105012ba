/* png_rows.c — row-match deflate for report images (see png_rows.h).
 *
 * Two passes: the matcher turns each row into symbols (literal bytes; matches of 3..258 bytes at
 * the row-above or the previous-pixel distance), counting each symbol and what the fixed codes
 * would take (the budget); then the block is written with the smaller of the dynamic codes
 * (Huffman code lengths of at most 15 bits from the counts; RFC 1951 3.2.7) and the fixed codes
 * (3.2.6). Sizes: every intermediate is bounded by the image (checked before allocating). */
#include "png_rows.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../common/buf.h"
#include "../common/checked_size.h"
#include "png_chunks.h"

#define LL_SYMS 286 /* literal/length symbols used: 0..255, end of block 256, lengths 257..285 */
#define D_SYMS 30

typedef struct {
    unsigned char *p; /* output; room for the worst case was reserved before writing */
    size_t len;
    uint64_t acc; /* bits not yet written, LSB first */
    int n;
} bit_out;

static inline void bits_put(bit_out *b, uint32_t v, int n) {
    b->acc |= (uint64_t)v << b->n;
    b->n += n;
    while (b->n >= 8) {
        b->p[b->len++] = (unsigned char)b->acc;
        b->acc >>= 8;
        b->n -= 8;
    }
}

static uint32_t bit_reverse(uint32_t v, int n) {
    uint32_t r = 0;
    for (int i = 0; i < n; i++) r |= ((v >> i) & 1u) << (n - 1 - i);
    return r;
}

/* What a match length or distance is in deflate: symbol, extra bits and their count. */
typedef struct {
    uint16_t len_sym[259];
    uint8_t len_xn[259];
    uint16_t len_xv[259];
    uint8_t dist_sym[2], dist_xn[2];
    uint16_t dist_xv[2];
} match_codes;

static void match_codes_init(match_codes *m, unsigned row_dist) {
    static const unsigned lbase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                       31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const uint8_t lextra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static const unsigned dbase[30] = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,    65,    97,    129,
                                       193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    for (unsigned len = 3, c = 0; len <= 258; len++) {
        while (c < 28 && lbase[c + 1] <= len) c++;
        m->len_sym[len] = (uint16_t)(257 + c);
        m->len_xn[len] = lextra[c];
        m->len_xv[len] = (uint16_t)(len - lbase[c]);
    }
    const unsigned dist[2] = {row_dist, 3};
    for (int i = 0; i < 2; i++) {
        int c = 29;
        while (dbase[c] > dist[i]) c--;
        m->dist_sym[i] = (uint8_t)c;
        m->dist_xn[i] = (uint8_t)(c < 4 ? 0 : c / 2 - 1);
        m->dist_xv[i] = (uint16_t)(dist[i] - dbase[c]);
    }
}

/* Fixed code length of literal/length symbol s (RFC 1951 3.2.6); distances are 5 bits. */
static int fixed_len(int s) { return s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8; }

/* The symbols of one image: a literal is its byte; a match is MATCH | distance index << 9 | len. */
#define MATCH 0x80000000u

typedef struct {
    uint32_t *sym;
    size_t n, cap;
    uint32_t ll_freq[LL_SYMS], d_freq[D_SYMS];
    uint64_t fixed_bits; /* the block's data with the fixed codes */
    const match_codes *m;
} symbols;

static inline void sym_literal(symbols *s, unsigned char v) {
    s->sym[s->n++] = v;
    s->ll_freq[v]++;
    s->fixed_bits += (uint64_t)fixed_len(v);
}

static inline void sym_match(symbols *s, size_t len, int d) {
    const match_codes *m = s->m;
    s->sym[s->n++] = MATCH | (uint32_t)d << 9 | (uint32_t)len;
    s->ll_freq[m->len_sym[len]]++;
    s->d_freq[m->dist_sym[d]]++;
    s->fixed_bits += (uint64_t)(fixed_len(m->len_sym[len]) + m->len_xn[len] + 5 + m->dist_xn[d]);
}

/* How many of the first max bytes of a and b are equal. */
static inline size_t equal_prefix(const unsigned char *a, const unsigned char *b, size_t max) {
    size_t n = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; n + 8 <= max; n += 8) {
        uint64_t x, y;
        memcpy(&x, a + n, 8);
        memcpy(&y, b + n, 8);
        if (x != y) return n + (size_t)(__builtin_ctzll(x ^ y) >> 3);
    }
#endif
    while (n < max && a[n] == b[n]) n++;
    return n;
}

/* One row's symbols: its filter byte (0), then its n bytes (prev: the row above, or NULL). At
 * most n + 1 symbols. */
static void row_symbols(symbols *s, const unsigned char *row, const unsigned char *prev, size_t n) {
    size_t i = 0;
    size_t up0 = prev ? 1 + equal_prefix(row, prev, n < 257 ? n : 257) : 0; /* the filter byte repeats too */
    if (up0 >= 3) {
        sym_match(s, up0, 0);
        i = up0 - 1;
    } else sym_literal(s, 0);
    while (i < n) {
        size_t max = n - i < 258 ? n - i : 258;
        size_t up = prev ? equal_prefix(row + i, prev + i, max) : 0;
        size_t run = i >= 3 ? equal_prefix(row + i, row + i - 3, max) : 0; /* overlapping copy */
        size_t best = up >= run ? up : run;
        if (best >= 3) {
            sym_match(s, best, up >= run ? 0 : 1);
            i += best;
        } else sym_literal(s, row[i++]);
    }
}

/* Code lengths (at most `limit` bits) of a Huffman code for freq[0..n): two lightest nodes merged
 * at a time (ties: the lower index), depths read back; past the limit the counts are halved (a
 * used symbol keeps at least 1) and the code built again. Fewer than two used symbols: the first
 * two symbols get 1 bit each, the used one among them (a complete code, which every inflater
 * takes). */
static void huff_lengths(const uint32_t *freq, int n, int limit, uint8_t *len) {
    uint64_t w[2 * LL_SYMS];
    int parent[2 * LL_SYMS], alive[2 * LL_SYMS];
    uint32_t f[LL_SYMS];
    int used = 0;
    for (int i = 0; i < n; i++) used += (f[i] = freq[i]) != 0;
    if (used < 2) {
        int u = 0;
        while (u < n - 1 && !f[u]) u++;
        memset(len, 0, (size_t)n);
        len[u] = len[u == 0 ? 1 : 0] = 1;
        return;
    }
    for (;;) {
        int nodes = 0;
        for (int i = 0; i < n; i++) {
            w[i] = f[i];
            alive[i] = f[i] != 0;
            parent[i] = -1;
        }
        nodes = n;
        for (int left = used; left > 1; left--) {
            int a = -1, b = -1;
            for (int i = 0; i < nodes; i++) {
                if (!alive[i]) continue;
                if (a < 0 || w[i] < w[a]) b = a, a = i;
                else if (b < 0 || w[i] < w[b]) b = i;
            }
            w[nodes] = w[a] + w[b];
            alive[nodes] = 1;
            parent[nodes] = -1;
            alive[a] = alive[b] = 0;
            parent[a] = parent[b] = nodes++;
        }
        int deepest = 0;
        for (int i = 0; i < n; i++) {
            int d = 0;
            if (f[i])
                for (int p = parent[i]; p >= 0; p = parent[p]) d++;
            len[i] = (uint8_t)d;
            if (d > deepest) deepest = d;
        }
        if (deepest <= limit) return;
        for (int i = 0; i < n; i++)
            if (f[i]) f[i] = f[i] / 2 ? f[i] / 2 : 1;
    }
}

/* Canonical codes (RFC 1951 3.2.2) of the lengths, bit-reversed for LSB-first output. */
static void huff_codes(const uint8_t *len, int n, uint32_t *code) {
    int count[16] = {0};
    uint32_t next[16];
    for (int i = 0; i < n; i++) count[len[i]]++;
    count[0] = 0;
    uint32_t c = 0;
    for (int b = 1; b < 16; b++) {
        c = (c + (uint32_t)count[b - 1]) << 1;
        next[b] = c;
    }
    for (int i = 0; i < n; i++) code[i] = len[i] ? bit_reverse(next[len[i]]++, len[i]) : 0;
}

/* The block's codes: lengths and codes of both alphabets, and the code-length header. */
typedef struct {
    uint8_t ll_len[LL_SYMS], d_len[D_SYMS];
    uint32_t ll_code[LL_SYMS], d_code[D_SYMS];
    int n_ll, n_d;            /* HLIT + 257, HDIST + 1 */
    uint8_t rle[LL_SYMS + D_SYMS], rle_x[LL_SYMS + D_SYMS]; /* code-length symbols 0..18, extra */
    int n_rle, n_cl;          /* HCLEN + 4 */
    uint8_t cl_len[19];
    uint32_t cl_code[19];
    uint64_t header_bits;
} dyn_codes;

static const uint8_t CL_ORDER[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

/* The code lengths of both alphabets, one after the other, run-length coded (symbols 16, 17, 18). */
static void dyn_rle(dyn_codes *k) {
    uint8_t all[LL_SYMS + D_SYMS];
    const int total = k->n_ll + k->n_d;
    memcpy(all, k->ll_len, (size_t)k->n_ll);
    memcpy(all + k->n_ll, k->d_len, (size_t)k->n_d);
    k->n_rle = 0;
    for (int i = 0; i < total;) {
        int v = all[i], run = 1;
        while (i + run < total && all[i + run] == v) run++;
        i += run;
        if (v == 0) {
            while (run >= 11) {
                int r = run < 138 ? run : 138;
                k->rle[k->n_rle] = 18, k->rle_x[k->n_rle++] = (uint8_t)(r - 11);
                run -= r;
            }
            if (run >= 3) {
                k->rle[k->n_rle] = 17, k->rle_x[k->n_rle++] = (uint8_t)(run - 3);
                run = 0;
            }
        } else {
            k->rle[k->n_rle] = (uint8_t)v, k->rle_x[k->n_rle++] = 0;
            run--;
            while (run >= 3) {
                int r = run < 6 ? run : 6;
                k->rle[k->n_rle] = 16, k->rle_x[k->n_rle++] = (uint8_t)(r - 3);
                run -= r;
            }
        }
        while (run-- > 0) k->rle[k->n_rle] = (uint8_t)v, k->rle_x[k->n_rle++] = 0;
    }
}

/* Dynamic codes from the counts; returns the bits of the whole block (header, data, end). */
static uint64_t dyn_build(dyn_codes *k, const symbols *s) {
    static const uint8_t xbits[19] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7};
    uint32_t ll[LL_SYMS], cl_freq[19] = {0};
    memcpy(ll, s->ll_freq, sizeof ll);
    ll[256] = 1; /* end of block */
    huff_lengths(ll, LL_SYMS, 15, k->ll_len);
    huff_lengths(s->d_freq, D_SYMS, 15, k->d_len);
    huff_codes(k->ll_len, LL_SYMS, k->ll_code);
    huff_codes(k->d_len, D_SYMS, k->d_code);
    for (k->n_ll = LL_SYMS; k->n_ll > 257 && !k->ll_len[k->n_ll - 1]; k->n_ll--) {}
    for (k->n_d = D_SYMS; k->n_d > 1 && !k->d_len[k->n_d - 1]; k->n_d--) {}
    dyn_rle(k);
    for (int i = 0; i < k->n_rle; i++) cl_freq[k->rle[i]]++;
    huff_lengths(cl_freq, 19, 7, k->cl_len);
    huff_codes(k->cl_len, 19, k->cl_code);
    for (k->n_cl = 19; k->n_cl > 4 && !k->cl_len[CL_ORDER[k->n_cl - 1]]; k->n_cl--) {}
    uint64_t bits = 3 + 5 + 5 + 4 + 3 * (uint64_t)k->n_cl;
    for (int i = 0; i < k->n_rle; i++) bits += k->cl_len[k->rle[i]] + xbits[k->rle[i]];
    k->header_bits = bits;
    const match_codes *m = s->m;
    for (int v = 0; v < LL_SYMS; v++) bits += (uint64_t)s->ll_freq[v] * k->ll_len[v];
    for (int d = 0; d < D_SYMS; d++) bits += (uint64_t)s->d_freq[d] * k->d_len[d];
    for (size_t i = 0; i < s->n; i++)
        if (s->sym[i] & MATCH) bits += m->len_xn[s->sym[i] & 511] + m->dist_xn[(s->sym[i] >> 9) & 1];
    return bits + k->ll_len[256];
}

/* Writes the block: the dynamic codes k, or the fixed codes when k is NULL. */
static void write_block(bit_out *o, const symbols *s, const dyn_codes *k) {
    static const uint8_t xbits[19] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7};
    dyn_codes fixed;
    if (k) {
        bits_put(o, 1 | 2u << 1, 3); /* BFINAL, BTYPE 10: dynamic codes */
        bits_put(o, (uint32_t)(k->n_ll - 257), 5);
        bits_put(o, (uint32_t)(k->n_d - 1), 5);
        bits_put(o, (uint32_t)(k->n_cl - 4), 4);
        for (int i = 0; i < k->n_cl; i++) bits_put(o, k->cl_len[CL_ORDER[i]], 3);
        for (int i = 0; i < k->n_rle; i++) {
            bits_put(o, k->cl_code[k->rle[i]], k->cl_len[k->rle[i]]);
            if (xbits[k->rle[i]]) bits_put(o, k->rle_x[i], xbits[k->rle[i]]);
        }
    } else {
        /* the fixed codes are the canonical codes of their lengths, over all 288 symbols (286 and
         * 287 are never sent, but they shift the 9-bit codes) */
        uint8_t len288[288];
        uint32_t code288[288];
        for (int v = 0; v < 288; v++) len288[v] = (uint8_t)fixed_len(v);
        huff_codes(len288, 288, code288);
        memcpy(fixed.ll_len, len288, sizeof fixed.ll_len);
        memcpy(fixed.ll_code, code288, sizeof fixed.ll_code);
        for (int d = 0; d < D_SYMS; d++) fixed.d_len[d] = 5;
        huff_codes(fixed.d_len, D_SYMS, fixed.d_code);
        k = &fixed;
        bits_put(o, 1 | 1u << 1, 3); /* BFINAL, BTYPE 01: fixed codes */
    }
    const match_codes *m = s->m;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t v = s->sym[i];
        if (!(v & MATCH)) {
            bits_put(o, k->ll_code[v], k->ll_len[v]);
            continue;
        }
        unsigned len = v & 511, d = (v >> 9) & 1;
        bits_put(o, k->ll_code[m->len_sym[len]], k->ll_len[m->len_sym[len]]);
        if (m->len_xn[len]) bits_put(o, m->len_xv[len], m->len_xn[len]);
        bits_put(o, k->d_code[m->dist_sym[d]], k->d_len[m->dist_sym[d]]);
        if (m->dist_xn[d]) bits_put(o, m->dist_xv[d], m->dist_xn[d]);
    }
    bits_put(o, k->ll_code[256], k->ll_len[256]);
}

/* Adler-32 (RFC 1950) of n bytes after the running value adler: what zlib's adler32 returns, in
 * 32 lanes the compiler can vectorize (zlib 1.2's loop is scalar: it took 4 of the ~9 ms this
 * encoder took per 128-position heatmap). Per chunk of at most 172 blocks of 32 bytes, lane j sums
 * its bytes (sa) and, after each block, its sum so far (sb): each stays below 2^32. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3"))) /* -O2 leaves the lane loop scalar (GCC 12) */
#endif
static uint32_t adler32_lanes(uint32_t adler, const unsigned char *p, size_t n) {
    const uint32_t MOD = 65521;
    uint32_t a = adler & 0xffffu, b = adler >> 16;
    while (n >= 32) {
        size_t blocks = n / 32 < 172 ? n / 32 : 172; /* 172 * 32 = 5504 bytes <= zlib's NMAX 5552 */
        uint32_t sa[32] = {0}, sb[32] = {0};
        b = (uint32_t)((b + (uint64_t)(blocks * 32) * a) % MOD);
        for (size_t k = 0; k < blocks; k++, p += 32)
            for (int j = 0; j < 32; j++) {
                sb[j] += sa[j];
                sa[j] += p[j];
            }
        uint64_t A = 0, B = 0;
        for (int j = 0; j < 32; j++) {
            A += sa[j];
            B += (uint64_t)sb[j] * 32 + (uint64_t)(32 - j) * sa[j];
        }
        a = (uint32_t)((a + A) % MOD);
        b = (uint32_t)((b + B) % MOD);
        n -= blocks * 32;
    }
    while (n--) {
        a += *p++;
        if (a >= MOD) a -= MOD;
        b += a;
        if (b >= MOD) b -= MOD;
    }
    return b << 16 | a;
}

/* Pass 1: the symbols of every row, and the Adler-32 of the filtered rows; 1 past the budget. */
static int image_symbols(const uint8_t *px, size_t n, size_t rows, size_t budget_bits, symbols *s, uint32_t *adler,
                         ae_error *err) {
    static const unsigned char filter_none = 0;
    uint32_t a = 1;
    for (size_t y = 0; y < rows; y++) {
        if (andrea_grow(&s->sym, &s->cap, s->n + n + 1, sizeof *s->sym, 65536))
            return andrea_fail(err, "canvas: out of memory encoding a PNG");
        const uint8_t *row = px + y * n;
        row_symbols(s, row, y ? row - n : NULL, n);
        if (s->fixed_bits > budget_bits) return 1;
        a = adler32_lanes(adler32_lanes(a, &filter_none, 1), row, n);
    }
    *adler = a;
    return 0;
}

int andrea_png_rows_encode(const uint8_t *px, int w, int h, unsigned char **out, size_t *out_len, ae_error *err) {
    const size_t n = (size_t)w * 3, rows = (size_t)h;
    size_t raw, cap;
    /* worst case: fixed codes, 9 bits per byte (every byte a literal of 144..255), plus headers */
    if (w < 1 || h < 1 || w > PNG_ROWS_MAX_W || ae_mul(n + 1, rows, &raw) || ae_mul(raw / 8 + 1, 9, &cap) ||
        ae_add(cap, 1024, &cap) || cap > 0x7fffffffu)
        return andrea_fail(err, "canvas: %d x %d image out of range for the row-match encoder", w, h);
    symbols *s = calloc(1, sizeof *s);
    match_codes *m = malloc(sizeof *m);
    dyn_codes *k = malloc(sizeof *k);
    unsigned char *buf = NULL;
    uint32_t adler = 1;
    int rc = -1;
    if (!s || !m || !k) {
        andrea_fail(err, "canvas: out of memory encoding a PNG");
        goto done;
    }
    match_codes_init(m, (unsigned)(n + 1));
    s->m = m;
    /* small images: any size will do */
    rc = image_symbols(px, n, rows, raw >= 65536 ? raw / PNG_ROWS_MIN_RATIO * 8 : (uint64_t)-1, s, &adler, err);
    if (rc) goto done;
    const uint64_t fixed_bits = 3 + s->fixed_bits + 7, dyn_bits = dyn_build(k, s);
    if (!(buf = malloc(cap))) {
        rc = andrea_fail(err, "canvas: out of memory encoding a %d x %d PNG", w, h);
        goto done;
    }
    size_t at = andrea_png_head(buf, w, h);
    bit_out o = {buf + at + 8, 0, 0, 0};
    o.p[o.len++] = 0x78; /* zlib header: deflate, 32 KiB window, no dictionary */
    o.p[o.len++] = 0x01;
    write_block(&o, s, dyn_bits < fixed_bits ? k : NULL); /* the smaller: within the fixed worst case */
    if (o.n > 0) bits_put(&o, 0, 8 - o.n);
    andrea_png_put_be32(o.p + o.len, adler);
    o.len += 4;
    at = andrea_png_chunk(buf, at, "IDAT", o.len);
    at = andrea_png_chunk(buf, at, "IEND", 0);
    *out = buf;
    *out_len = at;
    buf = NULL;
    rc = 0;
done:
    free(buf);
    if (s) free(s->sym);
    free(s);
    free(m);
    free(k);
    return rc;
}
