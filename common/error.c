/* error.c — the one error message (see error.h). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Puts the n-byte message s into err. One longer than the buffer (a path near PATH_MAX fills it
 * alone) keeps its start and its end, where the reason is, joined by "...", each cut on a UTF-8
 * character boundary. */
static void set_msg(ae_error *err, const char *s, size_t n) {
    const size_t cap = sizeof err->msg;
    if (n < cap) {
        memcpy(err->msg, s, n + 1);
        return;
    }
    size_t head = (cap - 4) * 2 / 5, tail_at = n - (cap - 4 - head);
    while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80) head--;      /* s[head] starts a character */
    while (tail_at < n && ((unsigned char)s[tail_at] & 0xC0) == 0x80) tail_at++;
    memcpy(err->msg, s, head);
    memcpy(err->msg + head, "...", 3);
    memcpy(err->msg + head + 3, s + tail_at, n - tail_at + 1);
}

/* Formats into err; a message longer than the buffer is formatted whole on the heap, then cut in
 * the middle (set_msg). Out of memory: the start only, as vsnprintf leaves it. */
static void format_msg(ae_error *err, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    const int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    if (n >= 0 && (size_t)n >= sizeof err->msg) {
        char *whole = malloc((size_t)n + 1);
        if (whole && vsnprintf(whole, (size_t)n + 1, fmt, again) == n) set_msg(err, whole, (size_t)n);
        free(whole);
    }
    va_end(again);
}

int andrea_fail(ae_error *err, const char *fmt, ...) {
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    format_msg(err, fmt, ap);
    va_end(ap);
    return -1;
}

int andrea_prefix(ae_error *err, const char *fmt, ...) {
    if (!err) return -1;
    char old[AE_ERROR_MAX];
    memcpy(old, err->msg, sizeof old);
    old[sizeof old - 1] = 0;
    va_list ap;
    va_start(ap, fmt);
    ae_error pre;
    format_msg(&pre, fmt, ap);
    va_end(ap);
    const size_t np = strlen(pre.msg), no = strlen(old);
    char whole[2 * AE_ERROR_MAX + 2];
    memcpy(whole, pre.msg, np);
    memcpy(whole + np, ": ", 2);
    memcpy(whole + np + 2, old, no + 1);
    set_msg(err, whole, np + 2 + no);
    return -1;
}
