/* report_interactive.c — data files, assets and generic pages of the interactive views (see
 * report_interactive.h; the browser side is reports/assets/andrea.js).
 *
 * Layout written under out_dir:
 *   assets/andrea.js, assets/andrea.css     from the binary (report_assets.c, generated)
 *   data/meta.js                            andrea_meta({...}): shape, examples, targets, colours
 *   data/L{l}_H{h}.js                       andrea_head(l, h, "base64 of the zlib stream of lower
 *                                           triangles": fp16, or one byte each (attn_code8.h) for an
 *                                           example meta marks "c8", each row of those less the row
 *                                           above (PNG's "up" filter, mod 256)
 *   data/m{m}/L{l}_H{h}.js                  andrea_head(l, h, "...", m): checkpoint m >= 1 (show --also)
 *   explore.html                            token view: #l=&h=&s=&e=
 *   compare.html                            two heads on one example: #a=L.H&b=L.H&s=&e=
 * Size: a head file holds sum over shown examples of n(n+1)/2 values, 2 bytes each (1 summarised),
 * deflated, 4/3 for base64: 32 examples of 128 tokens are 704 KB per head in fp16, 352 KB
 * summarised, before deflate. Deflate (level 6) takes the summarised bytes of the random ANDREA-120M's
 * report to 0.53 of their size with the up filter, 0.61 without (a row's attention resembles the
 * row above it more than its left neighbour); the browser inflates with DecompressionStream.
 */
#include "report_interactive.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../common/atomic_file.h"
#include "../common/checked_size.h"
#include "../common/half.h"
#include "../tokenizer/tokenizer.h"
#include "attn_code8.h"
#include "colormap.h"
#include "report_assets.h"

/* A JSON string: escapes " and \, and < > & U+2028 U+2029 as \uXXXX so the text stays inert
 * whatever page or script it lands in. s is UTF-8 (andrea_token_label output) or a name (a file
 * name: any byte): a control byte (DEL too) or a byte that is not part of printable UTF-8 becomes
 * the text \xNN, as andrea_html_add shows it in the pages (a name's U+0001 was invisible in the
 * menus), so the file stays valid UTF-8. */
static void buf_json(andrea_buf *b, const char *s) {
    andrea_buf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        int u = c >= 0x80 ? andrea_utf8_printable_len((const char *)p) : 1;
        if (c == '"' || c == '\\') andrea_buf_printf(b, "\\%c", c);
        else if (c == '<' || c == '>' || c == '&') andrea_buf_printf(b, "\\u%04x", c);
        else if (u == 0 || c < 0x20 || c == 0x7F) andrea_buf_printf(b, "\\\\x%02x", c); /* as the pages show it */
        else if (c == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9)) {
            andrea_buf_printf(b, "\\u%04x", p[2] == 0xA8 ? 0x2028 : 0x2029);
            p += 2;
        } else {
            andrea_buf_add(b, (const char *)p, (size_t)u);
            p += u - 1;
        }
    }
    andrea_buf_puts(b, "\"");
}

/* Appends the base64 of n bytes, written in place after one reservation (a head file is 1-3 MB:
 * one andrea_buf_add per 4 characters cost a call per 3 bytes). */
static void buf_base64(andrea_buf *b, const unsigned char *in, size_t n) {
    static const char T[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t len;
    if (ae_mul(n / 3 + (n % 3 != 0), 4, &len) || andrea_buf_reserve(b, len)) return; /* b stays failed */
    char *out = b->s + b->len;
    size_t i = 0;
    for (; i + 3 <= n; i += 3, out += 4) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[0] = T[v >> 18];
        out[1] = T[(v >> 12) & 63];
        out[2] = T[(v >> 6) & 63];
        out[3] = T[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
        out[0] = T[v >> 18];
        out[1] = T[(v >> 12) & 63];
        out[2] = i + 1 < n ? T[(v >> 6) & 63] : '=';
        out[3] = '=';
    }
    b->len += len;
    b->s[b->len] = 0;
}

static int join(char *out, size_t cap, const char *dir, const char *rel, ae_error *err) {
    int n = snprintf(out, cap, "%s/%s", dir, rel);
    if (n < 0 || (size_t)n >= cap) return andrea_fail(err, "%s: path too long", dir);
    return 0;
}

static int write_buf(const char *out_dir, const char *rel, andrea_buf *b, ae_error *err) {
    char path[AE_PATH_MAX];
    if (andrea_buf_failed(b)) return andrea_fail(err, "%s/%s: out of memory", out_dir, rel);
    if (join(path, sizeof path, out_dir, rel, err)) return -1;
    return andrea_write_file_atomic(path, b->s, b->len, err);
}

/* 1 when an example of n tokens is stored in the 8-bit code rather than fp16. */
static int summarised(const report_interactive_options *o, int n) {
    return o && o->summarise_above > 0 && n > o->summarise_above;
}

int andrea_report_any_summarised(const report_data *d, const report_interactive_options *o) {
    for (int s = 0; s < d->n_suites; s++)
        for (int e = 0; !d->suites[s].maps_of && e < d->suites[s].n_examples; e++)
            if (summarised(o, d->suites[s].n_tokens[e])) return 1;
    return 0;
}

static int head_wanted(const report_data *d, const report_interactive_options *o, int l, int h) {
    return !o || !o->heads || o->heads[l * d->n_head + h];
}

/* A token label's room: every byte of the longest token may show as \xNN. */
enum { TOKEN_LABEL_CAP = 4 * ANDREA_TOKEN_MAX_BYTES + 16 };

/* A token's whole text, as the token lists show it (a 66-character GPT-2 token was cut to 40 and
 * "…", which a literal "…" in the text also reads as). */
static void token_text(const report_data *d, const report_suite *su, int e, int i, char *out, size_t cap) {
    int id = su->tokens[(size_t)e * (size_t)su->T + (size_t)i];
    char bytes[ANDREA_TOKEN_MAX_BYTES];
    int nb = d->token_bytes ? d->token_bytes(d, id, bytes, sizeof bytes) : -1;
    if (nb < 0 && id != d->bos) snprintf(out, cap, "#%d", id);
    else andrea_token_label((const unsigned char *)bytes, nb < 0 ? 0 : nb, id == d->bos, LABEL_UTF8, ANDREA_TOKEN_MAX_BYTES, out, cap);
}

static int write_meta(const report_data *d, const char *out_dir, const report_interactive_options *o, ae_error *err) {
    andrea_buf b;
    andrea_buf_init(&b);
    andrea_buf_puts(&b, "/* GENERATED by andrea: the views' index of examples (reports/assets/andrea.js reads it). */\n"
                  "andrea_meta({\"model\":");
    buf_json(&b, d->model);
    const int code8 = andrea_report_any_summarised(d, o);
    andrea_buf_printf(&b, ",\"L\":%d,\"H\":%d,\"deflate\":1,\"precision\":\"%s\",\"headPages\":%s,\"heads\":[", d->n_layer, d->n_head,
                      code8 ? "fp16+code8" : "fp16", o && !o->head_pages ? "false" : "true");
    int first = 1;
    for (int l = 0; l < d->n_layer; l++)
        for (int h = 0; h < d->n_head; h++)
            if (head_wanted(d, o, l, h)) {
                andrea_buf_printf(&b, "%s[%d,%d]", first ? "" : ",", l, h);
                first = 0;
            }
    andrea_buf_puts(&b, "]");
    if (o && o->n_models > 1 && o->model_names) {
        andrea_buf_puts(&b, ",\"models\":[");
        for (int m = 0; m < o->n_models; m++) {
            if (m) andrea_buf_puts(&b, ",");
            buf_json(&b, o->model_names[m]);
        }
        andrea_buf_puts(&b, "]");
    }
    if (code8) { /* the values of the 8-bit codes, as the C side rounds to them */
        const float *t = andrea_code8_table();
        andrea_buf_puts(&b, ",\"code8\":[");
        for (int j = 0; j < ANDREA_CODE8_NAN; j++) andrea_buf_printf(&b, "%s%.9g", j ? "," : "", t[j]);
        andrea_buf_puts(&b, ",null]"); /* code 255: not a probability */
    }
    andrea_buf_puts(&b, ",\"magma\":\"");
    for (int i = 0; i < 256; i++) {
        rgb c = andrea_colormap_magma_index(i);
        andrea_buf_printf(&b, "%02x%02x%02x", c.r, c.g, c.b);
    }
    andrea_buf_puts(&b, "\",\"suites\":[");
    for (int s = 0; s < d->n_suites; s++) {
        const report_suite *su = &d->suites[s];
        andrea_buf_puts(&b, s ? ",\n{\"name\":" : "\n{\"name\":");
        buf_json(&b, su->name);
        if (su->maps_of) andrea_buf_printf(&b, ",\"same\":%d", su->maps_of - 1); /* its maps are suite same's */
        andrea_buf_puts(&b, ",\"examples\":[");
        for (int e = 0; e < su->n_examples; e++) {
            int n = su->n_tokens[e];
            andrea_buf_printf(&b, "%s{\"n\":%d,%s\"tok\":[", e ? ",\n" : "\n", n,
                              !su->maps_of && summarised(o, n) ? "\"c8\":1," : "");
            for (int i = 0; i < n; i++) {
                char lab[TOKEN_LABEL_CAP];
                token_text(d, su, e, i, lab, sizeof lab);
                if (i) andrea_buf_puts(&b, ",");
                buf_json(&b, lab);
            }
            andrea_buf_puts(&b, "],\"tgt\":[");
            const unsigned char *tg = su->target + (size_t)e * (size_t)su->T * (size_t)su->T;
            int nt = 0;
            for (int q = 0; q < n; q++)
                for (int k = 0; k <= q; k++)
                    if (tg[(size_t)q * (size_t)su->T + (size_t)k]) andrea_buf_printf(&b, "%s%d,%d", nt++ ? "," : "", q, k);
            andrea_buf_puts(&b, "]}");
        }
        andrea_buf_puts(&b, "]}");
    }
    andrea_buf_puts(&b, "]});\n");
    int rc = write_buf(out_dir, "data/meta.js", &b, err);
    andrea_buf_free(&b);
    return rc;
}

/* The up filter over a summarised example's n-row lower triangle at c: each row less the row above
 * (mod 256; a row's last value, which has none above, as it is). Rows from the last up, so that
 * each subtracts the row above as it was. andrea.js undoes it from the first row down. */
static void up_filter(unsigned char *c, int n) {
    for (int q = n - 1; q >= 1; q--) {
        unsigned char *row = c + (size_t)q * (size_t)(q + 1) / 2;
        const unsigned char *above = c + (size_t)(q - 1) * (size_t)q / 2;
        for (int k = 0; k < q; k++) row[k] = (unsigned char)(row[k] - above[k]);
    }
}

/* One head's data file: every shown example's lower triangle as fp16, or summarised to one byte
 * a value (map: [max T*T] scratch, half: [total * 2] scratch, z: [compressBound] scratch),
 * deflated. Maps are read, and the file written, one thread at a time. */
static int head_data(const report_data *d, const char *out_dir, const report_interactive_options *o, int model, int l,
                     int h, float *map, unsigned char *half, unsigned char *z, size_t z_cap, ae_error *err) {
    size_t at = 0; /* bytes */
    int rc = 0;
    for (int s = 0; s < d->n_suites; s++) {
        const report_suite *su = &d->suites[s];
        for (int e = 0; !su->maps_of && e < su->n_examples; e++) {
#pragma omp critical(report_read)
            rc = d->read_map(d, s, e, l, h, map, err);
            if (rc) return -1;
            const int code8 = summarised(o, su->n_tokens[e]);
            const size_t start = at;
            for (int q = 0; q < su->n_tokens[e]; q++) {
                const float *row = map + (size_t)q * (size_t)su->T;
                if (code8) {
                    andrea_code8_encode_n(half + at, row, (size_t)q + 1);
                    at += (size_t)q + 1;
                    continue;
                }
                for (int k0 = 0; k0 <= q; k0 += 256) {
                    uint16_t v[256];
                    const int n = q + 1 - k0 < 256 ? q + 1 - k0 : 256;
                    andrea_f32_to_f16_n(v, row + k0, (size_t)n);
                    for (int k = 0; k < n; k++, at += 2) {
                        half[at] = (unsigned char)(v[k] & 0xFF); /* little-endian */
                        half[at + 1] = (unsigned char)(v[k] >> 8);
                    }
                }
            }
            if (code8) up_filter(half + start, su->n_tokens[e]);
        }
    }
    /* level 1: on the random ANDREA-120M's summarised data it keeps 0.576 of the bytes at 40 MB/s,
     * level 6 (zlib's default) 0.549 at 7.6 MB/s, level 9 0.548 at 5.3 MB/s (one core of the
     * 2-core AMD EPYC VM, 2026-12-06): the report's time matters more than 5 % of its data */
    uLongf z_len = (uLongf)z_cap;
    if (compress2(z, &z_len, half, (uLong)at, 1) != Z_OK)
        return andrea_fail(err, "%s: cannot deflate the data of head %d.%d", out_dir, l, h);
    andrea_buf b;
    andrea_buf_init(&b);
    andrea_buf_printf(&b, "andrea_head(%d,%d,\"", l, h);
    buf_base64(&b, z, (size_t)z_len);
    if (model) andrea_buf_printf(&b, "\",%d);\n", model);
    else andrea_buf_puts(&b, "\");\n");
    char rel[64];
    if (model) snprintf(rel, sizeof rel, "data/m%d/L%d_H%d.js", model, l, h);
    else snprintf(rel, sizeof rel, "data/L%d_H%d.js", l, h);
#pragma omp critical(report_files)
    rc = write_buf(out_dir, rel, &b, err);
    andrea_buf_free(&b);
    return rc;
}

/* data/L{l}_H{h}.js for every wanted head, heads on OpenMP threads (the bytes do not depend on
 * the thread count). */
static int write_head_data(const report_data *d, const char *out_dir, const report_interactive_options *o, int model,
                           ae_error *err) {
    size_t total = 0, max_tt = 1;
    for (int s = 0; s < d->n_suites; s++) {
        const report_suite *su = &d->suites[s];
        size_t tt;
        if (ae_mul((size_t)su->T, (size_t)su->T, &tt)) return andrea_fail(err, "%s: maps too large", out_dir);
        if (tt > max_tt) max_tt = tt;
        for (int e = 0; e < su->n_examples; e++) {
            size_t n = (size_t)su->n_tokens[e];
            if (ae_add(total, n * (n + 1) / 2, &total)) return andrea_fail(err, "%s: maps too large", out_dir);
        }
    }
    size_t bytes;
    if (ae_mul(total ? total : 1, 2, &bytes) || bytes != (uLong)bytes || compressBound((uLong)bytes) < bytes)
        return andrea_fail(err, "%s: maps too large", out_dir);
    const size_t z_cap = compressBound((uLong)bytes);
    const int LH = d->n_layer * d->n_head;
    int failed = 0;
#pragma omp parallel
    {
        float *map = malloc(max_tt * sizeof *map);
        unsigned char *half = malloc(bytes), *z = malloc(z_cap);
        ae_error me = {{0}};
        int rc = 0;
        if (!map || !half || !z) rc = andrea_fail(&me, "%s: out of memory for the interactive data", out_dir);
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < LH; i++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (rc || stop || !head_wanted(d, o, i / d->n_head, i % d->n_head)) continue;
            rc = head_data(d, out_dir, o, model, i / d->n_head, i % d->n_head, map, half, z, z_cap, &me);
        }
        if (rc)
#pragma omp critical(report_err)
        {
            if (!failed) *err = me;
#pragma omp atomic write
            failed = 1;
        }
        free(map);
        free(half);
        free(z);
    }
    return failed ? -1 : 0;
}

static int write_assets(const char *out_dir, ae_error *err) {
    for (const report_asset *a = andrea_report_assets; a->name; a++) {
        char rel[128], path[AE_PATH_MAX];
        snprintf(rel, sizeof rel, "assets/%s", a->name);
        if (join(path, sizeof path, out_dir, rel, err) || andrea_write_file_atomic(path, a->data, a->len, err)) return -1;
    }
    return 0;
}

void andrea_report_html_scripts(andrea_buf *b, const char *up, int l, int h) {
    andrea_buf_printf(b, "<script src=\"%sassets/andrea.js\"></script>\n<script src=\"%sdata/meta.js\"></script>\n", up, up);
    if (l >= 0) andrea_buf_printf(b, "<script src=\"%sdata/L%d_H%d.js\"></script>\n", up, l, h);
}

static void nav(andrea_buf *b, const report_interactive_options *o) {
    andrea_buf_printf(b, "<nav><a href=\"index.html\">\xE2\x86\x90 %s</a><a href=\"explore.html\">token view</a>"
                   "<a href=\"compare.html\">compare heads</a></nav>\n",
                o && !o->head_pages ? "the prompt" : "all heads");
}

/* One of the two views' pages (explore.html, compare.html): a heading naming the model, what the
 * page does (intro, HTML), and the slot its script fills. */
static int write_view_page(const report_data *d, const char *out_dir, const report_interactive_options *o,
                           const char *file, const char *what, const char *heading, const char *intro, const char *slot,
                           ae_error *err) {
    andrea_buf b;
    char title[512];
    andrea_buf_init(&b);
    snprintf(title, sizeof title, "%s \xC2\xB7 %s", what, d->model);
    andrea_report_html_head(&b, title, "");
    nav(&b, o);
    andrea_buf_printf(&b, "<h1>%s: ", heading);
    andrea_html_add(&b, d->model);
    andrea_buf_printf(&b, "</h1>\n%s\n", intro);
    andrea_buf_printf(&b, "<p class=\"precision\">%s%s</p>\n", REPORT_PRECISION_NOTE, /* the notes hold '%' */
                      andrea_report_any_summarised(d, o) ? " " REPORT_SUMMARY_NOTE : "");
    andrea_buf_printf(&b, "<div class=\"%s\"></div>\n", slot);
    andrea_report_html_scripts(&b, "", -1, 0);
    andrea_buf_puts(&b, "</body>\n</html>\n");
    const int rc = andrea_report_write_html(out_dir, file, &b, err);
    andrea_buf_free(&b);
    return rc;
}

static int write_pages(const report_data *d, const char *out_dir, const report_interactive_options *o, ae_error *err) {
    return write_view_page(d, out_dir, o, "explore.html", "token view", "Token view",
                           "<p>Hover over a token (or click it to keep it) to colour the other tokens by the chosen "
                           "head's attention <strong>from</strong> it to earlier tokens; the second button shows attention "
                           "<strong>to</strong> it from later tokens. The grid picks the head (layer \xC3\x97 head).</p>",
                           "tv-slot", err) ||
                   write_view_page(d, out_dir, o, "compare.html", "compare heads", "Compare heads",
                                   "<p>Two heads on the same example; hovering one map shows the same cell of the other.</p>",
                                   "cmp-slot", err)
               ? -1
               : 0;
}

int andrea_report_write_mark(const report_data *d, const char *out_dir, const report_interactive_options *o,
                             ae_error *err) {
    char dir[AE_PATH_MAX];
    if (join(dir, sizeof dir, out_dir, "data", err) || andrea_report_mkdirs(dir, err)) return -1;
    return write_meta(d, out_dir, o, err);
}

int andrea_report_write_interactive(const report_data *d, const char *out_dir, const report_interactive_options *o,
                             ae_error *err) {
    char dir[AE_PATH_MAX];
    if (join(dir, sizeof dir, out_dir, "assets", err) || andrea_report_mkdirs(dir, err)) return -1;
    if (join(dir, sizeof dir, out_dir, "data", err) || andrea_report_mkdirs(dir, err)) return -1;
    if (write_assets(out_dir, err) || write_head_data(d, out_dir, o, 0, err)) return -1;
    return write_pages(d, out_dir, o, err);
}

int andrea_report_write_model_data(const report_data *d, const char *out_dir, const report_interactive_options *o, int m,
                            ae_error *err) {
    char dir[AE_PATH_MAX], rel[32];
    snprintf(rel, sizeof rel, "data/m%d", m);
    if (m < 1 || join(dir, sizeof dir, out_dir, rel, err) || andrea_report_mkdirs(dir, err)) return m < 1 ? andrea_fail(err, "%s: bad checkpoint index %d", out_dir, m) : -1;
    return write_head_data(d, out_dir, o, m, err);
}
