/* fuzz_util.c — helpers shared by the libFuzzer targets (fuzz_util.h). */
#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];
/* the names written so far, removed with the folder at exit (fork mode starts many processes) */
static const char *written[16];
static int n_written;

static void remove_scratch(void) {
    char path[512];
    for (int i = 0; i < n_written; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, written[i]);
        unlink(path);
    }
    rmdir(dir);
}

const char *fuzz_dir(void) {
    if (!dir[0]) {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof dir, "%s/andrea-fuzz-XXXXXX", base);
        if (!mkdtemp(dir)) abort();
        atexit(remove_scratch);
    }
    return dir;
}

const char *fuzz_write(const char *name, const uint8_t *data, size_t size) {
    static char path[512];
    int known = 0;
    for (int i = 0; i < n_written; i++) known |= strcmp(written[i], name) == 0;
    if (!known) {
        if (n_written == 16) abort();
        written[n_written++] = name; /* callers pass string literals */
    }
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f) != 0) abort();
    return path;
}

void fuzz_split(const uint8_t *data, size_t size, const uint8_t **a, size_t *na, const uint8_t **b,
                size_t *nb) {
    static const uint8_t sep[4] = {'\n', '-', '-', '\n'};
    for (size_t i = 0; i + 4 <= size; i++) {
        if (memcmp(data + i, sep, 4) == 0) {
            *a = data;
            *na = i;
            *b = data + i + 4;
            *nb = size - i - 4;
            return;
        }
    }
    *a = data;
    *na = size;
    *b = data + size;
    *nb = 0;
}

void fuzz_check_error(const char *target, const ae_error *err) {
    if (!err->msg[0] || strpbrk(err->msg, "\n\r")) {
        fprintf(stderr, "%s: refusal message breaks the one-line contract: \"%s\"\n", target, err->msg);
        abort();
    }
}
