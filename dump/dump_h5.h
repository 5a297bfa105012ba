/* dump_h5.h — HDF5 helpers shared by the dump writer and reader (internal to dump/dump_*.c).
 *
 * One check macro for every HDF5 call (STYLE.md): H5_TRY(call) evaluates a call returning hid_t
 * or herr_t, and on a negative result fills err with "PATH: HDF5 CALL failed: <HDF5's own
 * message> (file:line)" and jumps to the label `fail`. The enclosing function must have
 * `const char *h5_path` (the file named in messages) and `ae_error *err` in scope.
 * The library's automatic error printing is turned off (h5_silence) so a hostile or damaged file
 * never prints a stack trace; the message comes from walking the error stack instead.
 */
#ifndef ANDREA_DUMP_H5_H
#define ANDREA_DUMP_H5_H

#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#include "../common/error.h"

static herr_t h5_walk_cb(unsigned n, const H5E_error2_t *e, void *data) {
    /* The innermost entry (walked upward, it comes first) says what actually went wrong. */
    char *out = data;
    if (n == 0 && e->desc) snprintf(out, 200, "%s", e->desc);
    for (char *c = out; n == 0 && *c; c++)
        if ((unsigned char)*c < 0x20) *c = ' '; /* HDF5's descriptions hold newlines: one line */
    return 0;
}

static inline void h5_silence(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

/* HDF5's I/O failures say "file write failed: time = ..., filename = ..., file descriptor = ...,
 * errno = 28, error message = 'No space left on device', buf = ..."; what a user needs is the
 * operation and the system's reason. */
static inline void h5_shorten_io_error(char buf[200]) {
    const char *m = strstr(buf, "error message = '"), *comma = strstr(buf, ": time =");
    if (!m || !comma) return;
    m += strlen("error message = '");
    const char *end = strchr(m, '\'');
    char reason[128];
    snprintf(reason, sizeof reason, "%.*s", (int)(end ? end - m : (long)strlen(m)), m);
    char head[64];
    snprintf(head, sizeof head, "%.*s", (int)(comma - buf), buf);
    snprintf(buf, 200, "%s: %s", head, reason);
}

static inline const char *h5_last_error(char buf[200]) {
    buf[0] = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_walk_cb, buf);
    H5Eclear2(H5E_DEFAULT);
    if (!buf[0]) snprintf(buf, 200, "no detail");
    h5_shorten_io_error(buf);
    return buf;
}

/* what: the call's text; its function name is enough in a message (the arguments go on for lines) */
#define H5_FAIL_(what)                                                                                       \
    do {                                                                                                     \
        char h5msg_[200];                                                                                    \
        const char *what_ = (what);                                                                          \
        const char *paren_ = strchr(what_, '(');                                                             \
        andrea_fail(err, "%s: HDF5 %.*s failed: %s (%s:%d)", h5_path, (int)(paren_ ? paren_ - what_ : (long)strlen(what_)), \
                    what_, h5_last_error(h5msg_), AE_SOURCE_FILE, __LINE__);                                      \
        goto fail;                                                                                           \
    } while (0)

#define H5_TRY(call)                                  \
    do {                                              \
        if ((long long)(call) < 0) H5_FAIL_(#call);   \
    } while (0)

/* Same, for calls whose result must be kept: H5_ID(var, call). */
#define H5_ID(var, call)                          \
    do {                                          \
        (var) = (call);                           \
        if ((long long)(var) < 0) H5_FAIL_(#call); \
    } while (0)

#endif
