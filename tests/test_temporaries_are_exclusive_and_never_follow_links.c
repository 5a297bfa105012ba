/* test_temporaries_are_exclusive_and_never_follow_links — common/atomic_file.c.
 * A temporary named "<final>.tmp-<pid>" could be predicted, and a link planted there was followed:
 * `dump --out out.h5` truncated the file the link named. Temporaries now carry 64 random bits and
 * are made with O_CREAT|O_EXCL|O_NOFOLLOW. And a failed create reported the errno of the clean-up
 * after it ("No such file or directory" for a full inode table or too many open files). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/atomic_file.h"
#include "check.h"

static char dir[] = "/tmp/andrea-tmp-test-XXXXXX";

static void path_in(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", dir, name); }

static int read_all(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
    return (int)n;
}

static void test_two_temporaries_of_one_file_get_different_unpredictable_names(void) {
    char final[512], a[AE_PATH_MAX], b[AE_PATH_MAX], predictable[AE_PATH_MAX];
    path_in(final, sizeof final, "out.h5");
    ae_error err = {{0}};
    CHECK_MSG(andrea_tmp_begin(final, a, sizeof a, &err) == 0, "%s", err.msg);
    CHECK_MSG(andrea_tmp_begin(final, b, sizeof b, &err) == 0, "%s", err.msg);
    CHECK(strcmp(a, b) != 0);
    snprintf(predictable, sizeof predictable, "%s.tmp-%ld", final, (long)getpid());
    CHECK(strcmp(a, predictable) != 0 && strncmp(a, predictable, strlen(predictable)) == 0);
    struct stat sa;
    CHECK(lstat(a, &sa) == 0 && S_ISREG(sa.st_mode) && sa.st_size == 0); /* made by begin, empty */
    andrea_tmp_abort(a);
    andrea_tmp_abort(b);
    CHECK(access(a, F_OK) != 0 && access(b, F_OK) != 0);
}

/* Links planted at every name of the old scheme: none is written through. */
static void test_a_write_never_follows_a_planted_link(void) {
    char victim[512], final[512], link[AE_PATH_MAX], got[64];
    path_in(victim, sizeof victim, "victim.txt");
    path_in(final, sizeof final, "index.html");
    FILE *f = fopen(victim, "wb");
    CHECK(f && fputs("precious", f) >= 0 && fclose(f) == 0);
    snprintf(link, sizeof link, "%s.tmp-%ld", final, (long)getpid());
    CHECK(symlink(victim, link) == 0);
    ae_error err = {{0}};
    CHECK_MSG(andrea_write_file_atomic(final, "<html>", 6, &err) == 0, "%s", err.msg);
    CHECK(read_all(victim, got, sizeof got) == 8 && strcmp(got, "precious") == 0);
    CHECK(read_all(final, got, sizeof got) == 6 && strcmp(got, "<html>") == 0);
    struct stat sl;
    CHECK(lstat(link, &sl) == 0 && S_ISLNK(sl.st_mode)); /* not ours: left as it was */
    unlink(link);
}

/* With every descriptor in use, the reason is EMFILE's, not the clean-up's ENOENT. */
static void test_a_failed_create_names_its_own_reason(void) {
    char final[512];
    path_in(final, sizeof final, "page.html");
    struct rlimit old;
    CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
    struct rlimit low = old;
    low.rlim_cur = 16;
    CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
    int fds[32], n = 0;
    while (n < 32 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0) n++;
    ae_error err = {{0}};
    const int rc = andrea_write_file_atomic(final, "x", 1, &err);
    while (n > 0) close(fds[--n]);
    CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
    CHECK(rc == -1);
    CHECK_MSG(strstr(err.msg, "cannot create") && strstr(err.msg, strerror(EMFILE)), "%s", err.msg);
    CHECK(access(final, F_OK) != 0);
}

int main(void) {
    if (!mkdtemp(dir)) return check_skip("cannot make a scratch folder");
    RUN(test_two_temporaries_of_one_file_get_different_unpredictable_names);
    RUN(test_a_write_never_follows_a_planted_link);
    RUN(test_a_failed_create_names_its_own_reason);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_summary("test_temporaries_are_exclusive_and_never_follow_links");
}
