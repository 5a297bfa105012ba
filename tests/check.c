#define _XOPEN_SOURCE 700
#include "check.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int check_passed = 0, check_failed = 0;
static char tmp_dir[256];

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
    (void)sb;
    (void)type;
    (void)ftw;
    return remove(path) ? -1 : 0;
}

int check_summary(const char *suite) {
    printf("%s: %d passed, %d failed\n", suite, check_passed, check_failed);
    /* the scratch folder goes with a clean run; a failing one keeps it to look at */
    if (tmp_dir[0] && !check_failed && nftw(tmp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "%s: could not remove %s\n", suite, tmp_dir);
    else if (tmp_dir[0] && check_failed)
        printf("%s: files kept in %s\n", suite, tmp_dir);
    return check_failed ? 1 : 0;
}

int check_skip(const char *reason) {
    printf("SKIP: %s\n", reason);
    return 77;
}

const char *check_tmpdir(void) {
    if (!tmp_dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmp_dir, sizeof tmp_dir, "%s/andrea-test-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmp_dir)) {
            perror("mkdtemp");
            exit(2);
        }
    }
    return tmp_dir;
}
