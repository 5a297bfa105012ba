/* dump_isolated.c — andrea_dump_check_isolated (dump.h): read a whole dump in a forked child.
 *
 * Why a child process: HDF5 1.10.8 (Debian 12) reads out of bounds or crashes inside H5Dread /
 * H5Aexists / H5MM_strdup on some crafted files that carry a valid seal (docs/reliability.md);
 * no check on our side can see that damage before HDF5 parses it. The child reads everything the
 * analyzer and the reports read, so if the library is going to crash on this file, it crashes
 * there, and the parent turns that into a one-line refusal. Memory in the child stays bounded by
 * the largest single read (one map, one sequence's per-head values, one head_out slice). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../common/checked_size.h"
#include "dump.h"

#define ISOLATED_TIMEOUT_S 300

/* Runs in the child: open the dump and read every item, map, per-head value and head_out slice. */
static int read_everything(const char *path, ae_error *err) {
    andrea_dump *d = andrea_dump_open(path, err);
    if (!d) return -1;
    const andrea_config *c = andrea_dump_config(d);
    float *buf = NULL;
    int rc = -1;
    for (int s = 0; s < andrea_dump_n_suites(d); s++) {
        const andrea_dump_suite_info *si = andrea_dump_suite(d, s);
        probe_suite items;
        memset(&items, 0, sizeof items);
        if (andrea_dump_read_items(d, s, &items, err)) goto out;
        andrea_probe_suite_free(&items);
        const int has_out = andrea_dump_has(d, s, "head_out");
        const char *vals[2] = {"head_out_norm", "head_dla"};
        /* one buffer for the largest single read of this suite: T*T, L*H*T or T*C floats */
        const long long tt[2] = {si->T, si->T}, lht[3] = {c->n_layer, c->n_head, si->T}, tc[2] = {si->T, c->d_model};
        size_t n_tt, n_lht, n_tc, n = 0;
        if (ae_mul_dims(tt, 2, &n_tt) || ae_mul_dims(lht, 3, &n_lht) || ae_mul_dims(tc, 2, &n_tc)) {
            andrea_fail(err, "%s: /%s: sizes overflow", path, si->name);
            goto out;
        }
        n = n_tt > n_lht ? n_tt : n_lht;
        if (n_tc > n) n = n_tc;
        free(buf);
        if (ae_mul(n, sizeof(float), &n) || !(buf = malloc(n))) {
            andrea_fail(err, "%s: /%s: out of memory for a %zu-byte read buffer", path, si->name, n);
            goto out;
        }
        for (int i = 0; i < si->n_seq; i++) {
            for (int l = 0; l < c->n_layer; l++)
                for (int h = 0; h < c->n_head; h++) {
                    if (andrea_dump_read_map(d, s, i, l, h, buf, err)) goto out;
                    if (has_out && andrea_dump_read_head_out(d, s, i, l, h, buf, err)) goto out;
                }
            for (int k = 0; k < 2; k++)
                if (andrea_dump_has(d, s, vals[k]) && andrea_dump_read_head_values(d, s, i, vals[k], buf, err))
                    goto out;
        }
    }
    { /* the stored token text (render reads it when the tokenizer is absent) */
        char text[64];
        if (andrea_dump_token_text(d, 0, text, sizeof text, err) == -2) goto out;
    }
    rc = 0;
out:
    free(buf);
    andrea_dump_close(d);
    return rc;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int andrea_dump_check_isolated(const char *path, ae_error *err) {
    int fd[2];
    if (pipe(fd)) return andrea_fail(err, "%s: cannot check the dump: pipe: %s", path, strerror(errno));
    /* nothing buffered may be written twice (the child leaves with _exit, which does not flush,
     * but flushing here keeps the order of what the parent already printed) */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fd[0]);
        close(fd[1]);
        return andrea_fail(err, "%s: cannot check the dump: fork: %s", path, strerror(e));
    }
    if (pid == 0) {
        /* child: no core file for the crash we may be about to have; report through the pipe;
         * _exit, not exit: no atexit handlers of the parent's libraries run twice */
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
#ifdef _OPENMP
        /* libgomp's thread pool does not survive fork(): a parallel region in the child of a
         * parent that already ran one waits forever for threads that are not there (the seal
         * is checksummed on OpenMP threads). One thread: no pool. */
        omp_set_num_threads(1);
#endif
        close(fd[0]);
        ae_error cerr = {{0}};
        if (!read_everything(path, &cerr)) _exit(0);
        size_t len = strlen(cerr.msg), off = 0;
        while (off < len) {
            ssize_t w = write(fd[1], cerr.msg + off, len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            off += (size_t)w;
        }
        _exit(1);
    }
    close(fd[1]);
    /* parent: collect the message until the child closes its end (it exits), at most the timeout */
    char msg[AE_ERROR_MAX];
    size_t got = 0;
    int timed_out = 0;
    const double deadline = now_s() + ISOLATED_TIMEOUT_S;
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd p = {fd[0], POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break; /* cannot happen with one valid fd; waitpid still tells the outcome */
        if (r == 0) continue; /* re-check the deadline */
        char tmp[256];
        ssize_t n = read(fd[0], tmp, sizeof tmp);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break; /* EOF: the child exited (or died) */
        size_t keep = (size_t)n < sizeof msg - 1 - got ? (size_t)n : sizeof msg - 1 - got;
        memcpy(msg + got, tmp, keep);
        got += keep;
    }
    close(fd[0]);
    msg[got] = '\0';
    if (timed_out) kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) return andrea_fail(err, "%s: cannot check the dump: waitpid: %s", path, strerror(errno));
    }
    if (timed_out)
        return andrea_fail(err, "%s: damaged dump: reading it did not finish within %d s (the check process was killed)",
                       path, ISOLATED_TIMEOUT_S);
    if (WIFSIGNALED(st))
        return andrea_fail(err, "%s: damaged dump: the HDF5 library crashed reading it (signal %d)", path, WTERMSIG(st));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 1 && got) return andrea_fail(err, "%s", msg);
    /* no message: a sanitizer (or the C library) ended the child with its own exit status */
    return andrea_fail(err, "%s: damaged dump: the HDF5 library failed reading it (check process exit status %d)", path,
                   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}
