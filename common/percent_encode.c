/* percent_encode.c — see percent_encode.h. */
#include "percent_encode.h"

#include <string.h>

static int unreserved(unsigned char c, const char *keep) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (c && (strchr("-._~", c) || strchr(keep, c)));
}

size_t andrea_percent_encode(const char *s, const char *keep, char *out, size_t cap) {
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0, i = 0;
    for (; s[i]; i++) {
        const unsigned char c = (unsigned char)s[i];
        const size_t need = unreserved(c, keep) ? 1 : 3;
        if (k + need + 1 > cap) break;
        if (need == 1) {
            out[k++] = (char)c;
        } else {
            out[k++] = '%';
            out[k++] = hex[c >> 4];
            out[k++] = hex[c & 15];
        }
    }
    if (cap) out[k] = 0;
    return i;
}
