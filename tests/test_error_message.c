/* test_error_message.c — the one error message (common/error.h) stays one line that says what
 * is wrong however long the path in it: a message past AE_ERROR_MAX keeps its start and its end
 * (the reason) with "..." between them, cut on UTF-8 character boundaries; andrea_prefix too. */
#include <string.h>

#include "../common/error.h"
#include "check.h"

/* 1 when s is well-formed UTF-8 (the structure only: lead byte, continuation bytes). */
static int utf8_ok(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int len = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : (*p & 0xF8) == 0xF0 ? 4 : 0;
        if (!len) return 0;
        for (int k = 1; k < len; k++)
            if ((p[k] & 0xC0) != 0x80) return 0;
        p += len;
    }
    return 1;
}

static void test_a_short_message_is_kept_as_it_is(void) {
    ae_error err;
    CHECK(andrea_fail(&err, "%s: cannot create: %s", "a/b.png", "No space left on device") == -1);
    CHECK_MSG(!strcmp(err.msg, "a/b.png: cannot create: No space left on device"), "got %s", err.msg);
    CHECK(andrea_prefix(&err, "%s", "render") == -1);
    CHECK_MSG(!strcmp(err.msg, "render: a/b.png: cannot create: No space left on device"), "got %s", err.msg);
}

/* A path of 4000 bytes (PATH_MAX is 4096) filled the whole message: "andrea: /very/long/...",
 * and the reason was cut off. */
static void test_a_message_with_a_long_path_keeps_its_reason(void) {
    static char path[4100];
    size_t len = 0;
    while (len < 4000) { /* "/" then 2-byte characters, so a cut can land inside one */
        memcpy(path + len, "/\xC3\xA9\xC3\xA9\xC3\xA9" "d", 8);
        len += 8;
    }
    path[len] = 0;
    ae_error err;
    andrea_fail(&err, "%s/maps/L0_H0/s0-bos_e0.png: cannot create: %s", path, "File name too long");
    const size_t n = strlen(err.msg);
    CHECK_MSG(n < AE_ERROR_MAX, "length %zu", n);
    const char *tail = ": cannot create: File name too long";
    CHECK_MSG(n > strlen(tail) && !strcmp(err.msg + n - strlen(tail), tail), "the reason is cut off: ...%s",
              err.msg + (n > 60 ? n - 60 : 0));
    CHECK_MSG(!strncmp(err.msg, path, 20), "the start is not the path's");
    CHECK(strstr(err.msg, "...") != NULL);
    CHECK_MSG(utf8_ok(err.msg), "the cut splits a character");

    andrea_fail(&err, "%s: cannot create: No space left on device", path);
    andrea_prefix(&err, "%s: while writing the report", path);
    const size_t m = strlen(err.msg);
    tail = ": cannot create: No space left on device";
    CHECK_MSG(m < AE_ERROR_MAX && m > strlen(tail) && !strcmp(err.msg + m - strlen(tail), tail),
              "a prefixed long message lost its reason: ...%s", err.msg + (m > 60 ? m - 60 : 0));
    CHECK_MSG(utf8_ok(err.msg), "the prefixed cut splits a character");
}

int main(void) {
    RUN(test_a_short_message_is_kept_as_it_is);
    RUN(test_a_message_with_a_long_path_keeps_its_reason);
    return check_summary("test_error_message");
}
