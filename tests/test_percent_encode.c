/* test_percent_encode.c — names inside URIs and links (common/percent_encode.c): reserved and
 * non-ASCII bytes are escaped, `keep` bytes are not, and a short buffer cuts between escapes. */
#include <string.h>

#include "check.h"
#include "../common/percent_encode.h"

int main(void) {
    char out[64];
    CHECK(andrea_percent_encode("run#1?x y%", "", out, sizeof out) == 10);
    CHECK_MSG(!strcmp(out, "run%231%3Fx%20y%25"), "got %s", out);
    CHECK(andrea_percent_encode("/a b/c.db", "/", out, sizeof out) == 9);
    CHECK_MSG(!strcmp(out, "/a%20b/c.db"), "got %s", out);
    andrea_percent_encode("a/b", "", out, sizeof out);
    CHECK_MSG(!strcmp(out, "a%2Fb"), "a path segment keeps no '/': got %s", out);
    andrea_percent_encode("Az09-._~\x01\xc3\xa9", "", out, sizeof out);
    CHECK_MSG(!strcmp(out, "Az09-._~%01%C3%A9"), "got %s", out);
    /* cap 6: "ab" then "%23" needs 3 + NUL: fits (6 = 2 + 3 + 1); the next escape does not */
    CHECK(andrea_percent_encode("ab##", "", out, 6) == 3);
    CHECK_MSG(!strcmp(out, "ab%23"), "got %s", out);
    CHECK(andrea_percent_encode("ab##", "", out, 5) == 2);
    CHECK_MSG(!strcmp(out, "ab"), "an escape is never cut: got %s", out);
    CHECK(andrea_percent_encode("abc", "", out, 1) == 0 && out[0] == 0);
    CHECK(andrea_percent_encode("", "/", out, sizeof out) == 0 && out[0] == 0);
    return check_summary("percent_encode");
}
