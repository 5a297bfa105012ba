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
