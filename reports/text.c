/* text.c — HTML escaping and token labels (see text.h). */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "font.h"

/* The bidirectional controls (ALM, LRM, RLM, LRE..RLO, LRI..PDI): invisible, and one in a token
 * or a name reorders the text after it (the tokens after U+202E read backwards). */
static int bidi_control(unsigned cp) {
    return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/* Length of a well-formed UTF-8 sequence at p (at most n bytes) encoding a printable code point
 * (not C1 controls, not surrogates, not overlong, not a bidirectional control), or 0; the code
 * point in *out. */
static int utf8_seq(const unsigned char *p, int n, unsigned *out) {
    int len;
    unsigned cp;
    if (p[0] >= 0xC2 && p[0] <= 0xDF) {
        len = 2;
        cp = p[0] & 0x1Fu;
    } else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        len = 3;
        cp = p[0] & 0x0Fu;
    } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        len = 4;
        cp = p[0] & 0x07u;
    } else {
        return 0;
    }
    if (len > n) return 0;
    for (int i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x80 && cp < 0xA0) || bidi_control(cp)) return 0;
    *out = cp;
    return len;
}

int andrea_utf8_printable_len(const char *s) {
    unsigned cp;
    return utf8_seq((const unsigned char *)s, 4, &cp); /* stops at the first byte that continues no sequence: NUL too */
}

void andrea_html_add(andrea_buf *b, const char *s) {
    const char *run = s;
    while (*s) {
        const unsigned char c = (unsigned char)*s;
        const char *rep = NULL;
        int skip = 1, hex = 0;
        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if (c >= 0x80) hex = (skip = andrea_utf8_printable_len(s)) == 0;
            else hex = (c < 0x20 && c != '\t' && c != '\n') || c == 0x7F;
            break;
        }
        if (rep || hex) {
            andrea_buf_add(b, run, (size_t)(s - run));
            if (rep) andrea_buf_puts(b, rep);
            else andrea_buf_printf(b, "\\x%02x", c);
            skip = 1;
            run = s + 1;
        }
        s += skip;
    }
    andrea_buf_add(b, run, (size_t)(s - run));
}

/* Characters no label keeps as they are: the invisible (no-break space, soft hyphen, the zero-width
 * space, joiners and word joiner, the byte-order mark) and those that read as one of
 * andrea_token_label's markers (· ⏎ → …). A token of four no-break spaces, or of a zero-width
 * space, was a blank in the HTML token lists, and a literal "·" read as a space. */
static int hidden_or_marker(unsigned cp) {
    return cp == 0xA0 || cp == 0xAD || cp == 0xB7 || cp == 0x23CE || cp == 0x2192 || cp == 0x2026 ||
           (cp >= 0x200B && cp <= 0x200D) || (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF;
}

/* In PNG labels a character is kept when the PNG font draws it; in HTML every printable one. */
static int label_keeps(unsigned cp, label_mode mode) {
    if (hidden_or_marker(cp)) return 0;
    return mode == LABEL_UTF8 || andrea_report_font_glyph(&andrea_report_font_small, cp) != NULL;
}

char *andrea_token_label(const unsigned char *bytes, int n, int is_bos, label_mode mode, int max_chars, char *out,
                  size_t cap) {
    if (cap == 0) return out;
    out[0] = 0;
    if (is_bos) {
        snprintf(out, cap, "<bos>");
        return out;
    }
    size_t len = 0;
    int chars = 0;
    for (int i = 0; i < n; i++) {
        char piece[8];
        int plen;
        unsigned char c = bytes[i];
        int u = 0;
        unsigned cp = 0;
        if (c == ' ') plen = snprintf(piece, sizeof piece, "\xC2\xB7");
        else if (c == '\n') plen = snprintf(piece, sizeof piece, "\xE2\x8F\x8E");
        else if (c == '\t') plen = snprintf(piece, sizeof piece, "\xE2\x86\x92");
        else if (c == '\r') plen = snprintf(piece, sizeof piece, "\\r");
        else if (c == '\\') plen = snprintf(piece, sizeof piece, "\\\\");
        else if (c > 0x20 && c < 0x7F) plen = snprintf(piece, sizeof piece, "%c", c);
        else if (c >= 0x80 && (u = utf8_seq(bytes + i, n - i, &cp)) > 0 && label_keeps(cp, mode)) {
            memcpy(piece, bytes + i, (size_t)u);
            plen = u;
            i += u - 1;
        } else plen = snprintf(piece, sizeof piece, "\\x%02x", c);
        /* A visible character counts once; an escape counts as its width in characters. */
        int pchars = (u > 0 || c == ' ' || c == '\n' || c == '\t') ? 1 : plen;
        int more = i + 1 < n;
        /* Keep one character of room for "…" unless this is the last piece. */
        if ((max_chars > 0 && chars + pchars > max_chars - (more ? 1 : 0)) || len + (size_t)plen + 4 > cap) {
            if (len + 4 <= cap) memcpy(out + len, "\xE2\x80\xA6", 3), len += 3;
            break;
        }
        memcpy(out + len, piece, (size_t)plen);
        len += (size_t)plen;
        chars += pchars;
    }
    out[len] = 0;
    return out;
}

void andrea_file_slug(const char *name, char *out, size_t cap) {
    size_t i = 0;
    if (cap == 0) return;
    for (; name[i] && i + 1 < cap && i < 48; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        out[i] = ok ? c : '_';
    }
    out[i] = 0;
}

void andrea_file_tag(const char *name, char *out, size_t cap) {
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (cap == 0) return;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        const unsigned char c = *p;
        const int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (o + (ok ? 1 : 3) >= cap) break;
        if (ok) {
            out[o++] = (char)c;
        } else {
            out[o++] = '.';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = 0;
}
