/* test_sha256_blocks.c — andrea_sha256_blocks (the dump seal's checksum) against a one-thread
 * computation of the same definition over the file's bytes in memory: several full blocks and a
 * short last one, an exact multiple, nothing after `from`, and a missing file; and the checkpoint
 * hash (andrea_sha256_file_until) against a one-shot digest. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/sha256.h"
#include "check.h"

static void digest(const unsigned char *p, size_t n, unsigned char md[32]) {
    unsigned int len = 0;
    EVP_Digest(p, n, md, &len, EVP_sha256(), NULL);
}

/* sha256 of the concatenated sha256 of each block of data[from..n) */
static void reference(const unsigned char *data, size_t n, size_t from, size_t block, char hex[65]) {
    size_t tail = n > from ? n - from : 0, nb = (tail + block - 1) / block;
    unsigned char *mds = malloc(32 * (nb ? nb : 1)), md[32];
    for (size_t i = 0; i < nb; i++) {
        size_t off = i * block, len = tail - off < block ? tail - off : block;
        digest(data + from + off, len, mds + 32 * i);
    }
    digest(mds, 32 * nb, md);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    free(mds);
}

static int check_file(size_t n, size_t from, size_t block) {
    char path[] = "/tmp/andrea-sha256-blocks-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unsigned char *data = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) data[i] = (unsigned char)(i * 2654435761u >> 13);
    CHECK(write(fd, data, n) == (ssize_t)n);
    close(fd);
    char want[65], have[65];
    ae_error err = {0};
    reference(data, n, from, block, want);
    CHECK_MSG(andrea_sha256_blocks(path, (long)from, block, have, &err) == 0, "%s", err.msg);
    CHECK_MSG(strcmp(want, have) == 0, "n %zu from %zu block %zu: %s vs %s", n, from, block, have, want);
    unlink(path);
    free(data);
    return 0;
}

static int test_blocks_with_a_short_last_one_match_the_definition(void) { return check_file(512 + 4096 * 7 + 123, 512, 4096); }
static int test_an_exact_multiple_of_the_block_matches(void) { return check_file(512 + 4096 * 3, 512, 4096); }
static int test_nothing_after_from_is_the_digest_of_no_blocks(void) { return check_file(100, 512, 4096); }

static int test_a_changed_byte_changes_the_checksum(void) {
    char path[] = "/tmp/andrea-sha256-blocks-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unsigned char buf[9000] = {0};
    CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
    char a[65], b[65];
    ae_error err = {0};
    CHECK(andrea_sha256_blocks(path, 0, 4096, a, &err) == 0);
    CHECK(pwrite(fd, "x", 1, 8999) == 1);
    close(fd);
    CHECK(andrea_sha256_blocks(path, 0, 4096, b, &err) == 0);
    CHECK(strcmp(a, b) != 0);
    unlink(path);
    return 0;
}

static int test_a_missing_file_is_an_error_naming_it(void) {
    char hex[65];
    ae_error err = {0};
    CHECK(andrea_sha256_blocks("/nonexistent/andrea.h5", 512, 4096, hex, &err) == -1);
    CHECK(strstr(err.msg, "/nonexistent/andrea.h5: cannot open") != NULL);
    return 0;
}

/* andrea_sha256_file_until (the checkpoint's hash: reads on a second thread into a ring of four
 * 1 MiB buffers) is the plain sha256 of the file's bytes: sizes around the ring's wrap and the
 * buffer size, and nothing; a stop flag already set gives up with "hashing stopped". */
static int test_the_prefetched_checkpoint_hash_is_the_sha256_of_the_bytes(void) {
    const size_t sizes[] = {0, 1, ((size_t)1 << 20) - 1, (size_t)1 << 20, ((size_t)9 << 20) + 12345};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const size_t n = sizes[k];
        char path[] = "/tmp/andrea-sha256-until-XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        unsigned char *data = malloc(n ? n : 1), md[32];
        for (size_t i = 0; i < n; i++) data[i] = (unsigned char)(i * 2654435761u >> 13);
        CHECK(write(fd, data, n) == (ssize_t)n);
        close(fd);
        char want[65], have[65] = "";
        digest(data, n, md);
        for (int i = 0; i < 32; i++) snprintf(want + 2 * i, 3, "%02x", md[i]);
        ae_error err = {0};
        CHECK_MSG(andrea_sha256_file_until(path, NULL, have, &err) == 0, "%s", err.msg);
        CHECK_MSG(strcmp(want, have) == 0, "%zu bytes: %s, want %s", n, have, want);
        const int stop = 1;
        CHECK(andrea_sha256_file_until(path, &stop, have, &err) == (n ? -1 : 0));
        CHECK(n == 0 || strstr(err.msg, "hashing stopped") != NULL);
        unlink(path);
        free(data);
    }
    return 0;
}

int main(void) {
    RUN(test_blocks_with_a_short_last_one_match_the_definition);
    RUN(test_an_exact_multiple_of_the_block_matches);
    RUN(test_nothing_after_from_is_the_digest_of_no_blocks);
    RUN(test_a_changed_byte_changes_the_checksum);
    RUN(test_a_missing_file_is_an_error_naming_it);
    RUN(test_the_prefetched_checkpoint_hash_is_the_sha256_of_the_bytes);
    return check_summary("test_sha256_blocks");
}
