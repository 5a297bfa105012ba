#include "check.h"

#include <stdlib.h>
#include <string.h>

int check_passed = 0, check_failed = 0;

int check_summary(const char *suite) {
    printf("%s: %d passed, %d failed\n", suite, check_passed, check_failed);
    return check_failed ? 1 : 0;
}

int check_skip(const char *reason) {
    printf("SKIP: %s\n", reason);
    return 77;
}

const char *check_tmpdir(void) {
    static char dir[256];
    if (!dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/andrea-test-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            exit(2);
        }
    }
    return dir;
}
