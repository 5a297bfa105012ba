#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

volatile int andrea_interrupted = 0;

/* A fixed table rather than a list: the signal handler may only touch memory that is never
 * reallocated, and unlink() is async-signal-safe. */
static char tmp_names[AE_TMP_MAX][AE_PATH_MAX];
static volatile sig_atomic_t tmp_used[AE_TMP_MAX];

/* 64 random bits for a temporary's name; where the kernel has no getrandom, the clock and a
 * counter (O_EXCL still keeps a planted name from being used). */
static uint64_t tmp_nonce(void) {
    static uint64_t counter;
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v) return v;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ (++counter * 0x9e3779b97f4a7c15ull);
}

int andrea_tmp_begin(const char *final_path, char *tmp, size_t cap, ae_error *err) {
    /* rename() could not put a file over a folder anyway, and over a device, FIFO or socket it
     * would replace that (as root: /dev/null) with the file: say so before the work */
    struct stat sb;
    if (stat(final_path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return andrea_fail(err, "%s: is a folder (give the name of a file to write)", final_path);
    if (stat(final_path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return andrea_fail(err, "%s: exists and is not a regular file (a device, FIFO or socket); give the name of a file "
                            "to write", final_path);
    int slot = -1;
    for (int i = 0; i < AE_TMP_MAX && slot < 0; i++)
        if (!tmp_used[i]) slot = i;
    if (slot < 0) return andrea_fail(err, "%s: too many temporary files open at once", final_path);
    /* A name no one can guess, made here with O_EXCL: a link planted at a predictable
     * "<final>.tmp-<pid>" was followed, and the file it named truncated (any file of the user's;
     * as root, any file). O_EXCL|O_CREAT never follows a link, even a dangling one. */
    for (int attempt = 0; attempt < 16; attempt++) {
        int n = snprintf(tmp, cap, "%s.tmp-%ld-%016llx", final_path, (long)getpid(), (unsigned long long)tmp_nonce());
        if (n < 0 || (size_t)n >= cap || (size_t)n >= AE_PATH_MAX)
            return andrea_fail(err, "%s: path too long", final_path);
        /* registered before it exists: a signal between the create and the registration left
         * the file behind (tools/hunt_interrupts.sh: a PNG's temporary after SIGTERM). The name
         * is complete before the slot is marked used, for the handler that reads it. */
        memcpy(tmp_names[slot], tmp, (size_t)n + 1);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        tmp_used[slot] = 1;
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) {
            const int e = errno; /* before anything else can change it */
            tmp_used[slot] = 0;   /* not ours: never unlinked (EEXIST: someone's file) */
            if (e == EEXIST) continue;
            tmp[0] = 0;
            return andrea_fail(err, "%s: cannot create: %s", final_path, strerror(e));
        }
        if (close(fd) != 0) {
            const int e = errno;
            andrea_tmp_abort(tmp);
            tmp[0] = 0;
            return andrea_fail(err, "%s: cannot create: %s", final_path, strerror(e));
        }
        return 0;
    }
    tmp[0] = 0;
    return andrea_fail(err, "%s: cannot create a temporary file beside it (every name tried exists)", final_path);
}

static void tmp_unregister(const char *tmp) {
    for (int i = 0; i < AE_TMP_MAX; i++)
        if (tmp_used[i] && strcmp(tmp_names[i], tmp) == 0) tmp_used[i] = 0;
}

int andrea_tmp_commit(const char *tmp, const char *final_path, ae_error *err) {
    if (rename(tmp, final_path) != 0) {
        int e = errno;
        unlink(tmp);
        tmp_unregister(tmp);
        return andrea_fail(err, "%s: cannot rename from temporary file: %s", final_path, strerror(e));
    }
    tmp_unregister(tmp);
    return 0;
}

void andrea_tmp_abort(const char *tmp) {
    unlink(tmp);
    tmp_unregister(tmp);
}

static void on_signal(int sig) {
    andrea_interrupted = 1;
    for (int i = 0; i < AE_TMP_MAX; i++)
        if (tmp_used[i]) unlink(tmp_names[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

void andrea_tmp_install_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* SIGHUP: the terminal or ssh session closed; SIGPIPE: the reader of stdout went away. Both
     * end the process as its default does, but without leaving temporaries behind. */
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}

int andrea_write_file_atomic(const char *path, const void *data, size_t len, ae_error *err) {
    char tmp[AE_PATH_MAX];
    if (andrea_tmp_begin(path, tmp, sizeof tmp, err)) return -1;
    /* O_NOFOLLOW: the temporary andrea_tmp_begin made is opened again, and a link put in its
     * place meanwhile must not be written through */
    int fd = open(tmp, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        const int e = errno; /* andrea_tmp_abort's unlink would overwrite it */
        if (fd >= 0) close(fd);
        andrea_tmp_abort(tmp);
        return andrea_fail(err, "%s: cannot create: %s", path, strerror(e));
    }
    size_t wrote = len ? fwrite(data, 1, len, f) : 0;
    int bad = wrote != len || ferror(f);
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        andrea_tmp_abort(tmp);
        return andrea_fail(err, "%s: write failed: %s", path, strerror(e));
    }
    return andrea_tmp_commit(tmp, path, err);
}
