#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int andrea_fail(ae_error *err, const char *fmt, ...) {
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int andrea_prefix(ae_error *err, const char *fmt, ...) {
    if (!err) return -1;
    char old[AE_ERROR_MAX];
    memcpy(old, err->msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof err->msg)
        snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", old);
    return -1;
}
