/* printable.c — see printable.h. */
#include "printable.h"

#include <string.h>

const char *andrea_printable(const char *s, char *buf, size_t cap) {
    if (cap == 0) return buf;
    size_t n = strlen(s), k = 0;
    for (; k < n && k + 1 < cap; k++) buf[k] = s[k] >= 0x20 && s[k] < 0x7f ? s[k] : '?';
    buf[k] = '\0';
    if (k < n && cap >= 4) memcpy(buf + cap - 4, "...", 4);
    return buf;
}

const char *andrea_shown(const char *s, char *buf, size_t cap) {
    if (cap == 0) return buf;
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && k + 1 < cap; p++)
        buf[k++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
    buf[k] = 0;
    return buf;
}
