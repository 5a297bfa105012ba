/* sha256.c — sha256 (OpenSSL EVP) of a file or of an open file's tail, and the block-tree form
 * that dump seals use (blocks hashed on every OpenMP thread); one pread helper serves all.
 * Errors: "PATH: problem" in err, return -1. */
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checked_size.h"
#include "strict_input.h"

static int stopped(const int *stop) { return stop && __atomic_load_n(stop, __ATOMIC_RELAXED); }

/* Fills buf with want bytes at `at`; -1 on a read error or a shorter file. */
static int pread_full(int fd, unsigned char *buf, size_t want, off_t at) {
    for (size_t got = 0; got < want;) {
        ssize_t n = pread(fd, buf + got, want - got, at + (off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    return 0;
}

/* The one-thread digest loop: sha256 of len bytes of fd at offset `at`, through pread (position-
 * independent, so threads can share fd). -1 on a read error, or when the file is shorter (it
 * shrank under us), or (stop non-NULL) once *stop is set. */
static int sha256_range_until(int fd, off_t at, size_t len, unsigned char md[32], unsigned char *buf, size_t buf_len,
                              const int *stop) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    while (ok && len > 0) {
        const size_t n = len < buf_len ? len : buf_len;
        ok = !stopped(stop) && pread_full(fd, buf, n, at) == 0 && EVP_DigestUpdate(ctx, buf, n) == 1;
        at += (off_t)n;
        len -= n;
    }
    unsigned int mdlen = 0;
    ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32;
    EVP_MD_CTX_free(ctx);
    return ok ? 0 : -1;
}

static int sha256_range(int fd, off_t at, size_t len, unsigned char md[32], unsigned char *buf, size_t buf_len) {
    return sha256_range_until(fd, at, len, md, buf, buf_len, NULL);
}

static void to_hex(const unsigned char md[32], char hex[65]) {
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

int andrea_sha256_bytes(const void *data, size_t n, char hex[65]) {
    unsigned char md[32];
    unsigned int mdlen = 0;
    if (EVP_Digest(data, n, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) return -1;
    to_hex(md, hex);
    return 0;
}

/* Bytes of fd from `from` to EOF (0 when the file is shorter). */
static int tail_size(int fd, long from, size_t *tail, const char *path, ae_error *err) {
    struct stat st;
    if (fstat(fd, &st) != 0) return andrea_fail(err, "%s: cannot stat: %s", path, strerror(errno));
    *tail = st.st_size > from ? (size_t)(st.st_size - from) : 0;
    return 0;
}

int andrea_sha256_stream(FILE *f, long from, char hex[65], const char *path, ae_error *err) {
    unsigned char buf[1 << 16], md[32];
    size_t tail = 0;
    const int fd = fileno(f);
    if (fd < 0) return andrea_fail(err, "%s: not a file stream", path);
    if (tail_size(fd, from, &tail, path, err)) return -1;
    if (sha256_range(fd, (off_t)from, tail, md, buf, sizeof buf)) return andrea_fail(err, "%s: read error while hashing", path);
    to_hex(md, hex);
    return 0;
}

int andrea_sha256_file(const char *path, char hex[65], ae_error *err) {
    /* a regular file only: a FIFO named like a checkpoint (classify's recorded path) would hold
     * open() until a writer came */
    FILE *f = andrea_fopen_regular(path, err);
    if (!f) return -1;
    int rc = andrea_sha256_stream(f, 0, hex, path, err);
    fclose(f);
    return rc;
}

/* ---- the checkpoint hash: reads on a second thread ----
 * At SHA-NI speed (~1.1 GB/s) the pread copies out of the page cache are a tenth of a one-thread
 * hash loop; a reader thread fills a ring of PREFETCH_SLOTS buffers while the caller digests, so
 * the caller only hashes (a 6.2 GB checkpoint: ~0.5 s less). The digest is the same bytes in the
 * same order. Slot states: 0 empty, 1 full (n bytes), 2 the end (all read), -1 a read error or
 * a short file; *stop makes both threads give up. */
#define PREFETCH_SLOTS 4
#define PREFETCH_BYTES ((size_t)1 << 20)

typedef struct {
    int fd;
    size_t len;
    const int *stop;
    unsigned char *buf[PREFETCH_SLOTS];
    size_t n[PREFETCH_SLOTS];
    int state[PREFETCH_SLOTS];
    int quit; /* the hasher gave up: the reader stops */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} prefetch;

static void *prefetch_run(void *arg) {
    prefetch *p = arg;
    size_t at = 0;
    for (unsigned k = 0;; k++) {
        const int slot = (int)(k % PREFETCH_SLOTS);
        pthread_mutex_lock(&p->mu);
        while (p->state[slot] != 0 && !p->quit) pthread_cond_wait(&p->cv, &p->mu);
        const int quit = p->quit;
        pthread_mutex_unlock(&p->mu);
        if (quit) return NULL;
        int state = 2;
        size_t n = 0;
        if (at < p->len) {
            n = p->len - at < PREFETCH_BYTES ? p->len - at : PREFETCH_BYTES;
            state = stopped(p->stop) || pread_full(p->fd, p->buf[slot], n, (off_t)at) ? -1 : 1;
            at += n;
        }
        pthread_mutex_lock(&p->mu);
        p->n[slot] = n;
        p->state[slot] = state;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        if (state != 1) return NULL;
    }
}

/* sha256 of len bytes of fd from offset 0, read on a second thread; 1 when no thread or buffer
 * could be had (the caller hashes on its own), -1 as sha256_range_until. */
static int sha256_prefetched(int fd, size_t len, unsigned char md[32], const int *stop) {
    prefetch p;
    memset(&p, 0, sizeof p);
    p.fd = fd;
    p.len = len;
    p.stop = stop;
    unsigned char *mem = malloc(PREFETCH_SLOTS * PREFETCH_BYTES);
    EVP_MD_CTX *ctx = mem ? EVP_MD_CTX_new() : NULL;
    if (!ctx) {
        free(mem);
        return 1;
    }
    for (int i = 0; i < PREFETCH_SLOTS; i++) p.buf[i] = mem + (size_t)i * PREFETCH_BYTES;
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    pthread_t reader;
    int rc = 1;
    if (pthread_create(&reader, NULL, prefetch_run, &p) == 0) {
        int ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1, end = 0;
        for (unsigned k = 0; ok && !end; k++) {
            const int slot = (int)(k % PREFETCH_SLOTS);
            pthread_mutex_lock(&p.mu);
            while (p.state[slot] == 0) pthread_cond_wait(&p.cv, &p.mu);
            const int state = p.state[slot];
            pthread_mutex_unlock(&p.mu);
            if (state == 1) ok = !stopped(stop) && EVP_DigestUpdate(ctx, p.buf[slot], p.n[slot]) == 1;
            else if (state == 2) end = 1;
            else ok = 0;
            pthread_mutex_lock(&p.mu);
            p.state[slot] = 0;
            if (!ok) p.quit = 1;
            pthread_cond_broadcast(&p.cv);
            pthread_mutex_unlock(&p.mu);
        }
        /* every way out of the loop tells the reader, a failed EVP_DigestInit_ex too (no memory
         * under a tight ulimit -v): else it filled every slot and waited for ever, and so did
         * this join (issue 43, 7) */
        pthread_mutex_lock(&p.mu);
        p.quit = 1;
        pthread_cond_broadcast(&p.cv);
        pthread_mutex_unlock(&p.mu);
        pthread_join(reader, NULL);
        unsigned int mdlen = 0;
        rc = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32 ? 0 : -1;
    }
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    EVP_MD_CTX_free(ctx);
    free(mem);
    return rc;
}

int andrea_sha256_file_until(const char *path, const int *stop, char hex[65], ae_error *err) {
    /* O_NONBLOCK: a FIFO in the checkpoint's place must not hold a thread in open() (the reader
     * refuses it; regular files ignore the flag) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return andrea_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return andrea_fail(err, "%s: not a regular file", path);
    }
    unsigned char md[32];
    size_t size = 0;
    int rc = -1;
    if (!tail_size(fd, 0, &size, path, err)) {
        int h = sha256_prefetched(fd, size, md, stop);
        if (h == 1) { /* no second thread or ring: one thread, one buffer */
            const size_t buf_len = PREFETCH_BYTES;
            unsigned char *buf = malloc(buf_len);
            h = buf ? sha256_range_until(fd, 0, size, md, buf, buf_len, stop) : 2;
            free(buf);
        }
        if (h == 0) {
            to_hex(md, hex);
            rc = 0;
        } else if (h == 2) {
            andrea_fail(err, "%s: out of memory", path);
        } else if (stopped(stop)) {
            andrea_fail(err, "%s: hashing stopped", path);
        } else {
            andrea_fail(err, "%s: read error while hashing", path);
        }
    }
    close(fd);
    return rc;
}

int andrea_sha256_blocks(const char *path, long from, size_t block, char hex[65], ae_error *err) {
    if (block == 0) return andrea_fail(err, "%s: checksum block size 0", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return andrea_fail(err, "%s: cannot open: %s", path, strerror(errno));
    size_t tail = 0;
    if (tail_size(fd, from, &tail, path, err)) {
        close(fd);
        return -1;
    }
    const size_t n_blocks = tail / block + (tail % block != 0);
    unsigned char *mds = NULL;
    size_t mds_bytes;
    if (ae_mul(n_blocks ? n_blocks : 1, 32, &mds_bytes) || !(mds = malloc(mds_bytes))) {
        close(fd);
        return andrea_fail(err, "%s: out of memory for %zu block checksums", path, n_blocks);
    }
    int bad = 0;
#pragma omp parallel reduction(| : bad)
    {
        const size_t buf_len = 1 << 20;
        unsigned char *buf = malloc(buf_len);
        bad |= buf == NULL;
#pragma omp for schedule(dynamic, 1)
        for (long long i = 0; i < (long long)n_blocks; i++) {
            const size_t off = (size_t)i * block, len = tail - off < block ? tail - off : block;
            if (buf && !bad) bad |= sha256_range(fd, (off_t)(from + (off_t)off), len, mds + 32 * (size_t)i, buf, buf_len) != 0;
        }
        free(buf);
    }
    close(fd);
    unsigned char md[32];
    unsigned int mdlen = 0;
    int rc = -1;
    if (bad) {
        andrea_fail(err, "%s: read error while checksumming", path);
    } else if (EVP_Digest(mds, 32 * n_blocks, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
        andrea_fail(err, "%s: EVP_Digest failed", path);
    } else {
        to_hex(md, hex);
        rc = 0;
    }
    free(mds);
    return rc;
}

int andrea_sha256_hex_equal(const char a[65], const char b[65]) {
    unsigned diff = 0;
    for (int i = 0; i < 64; i++) diff |= (unsigned char)a[i] ^ (unsigned char)b[i];
    return diff == 0;
}
