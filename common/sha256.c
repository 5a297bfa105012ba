/* sha256.c — streamed sha256 (OpenSSL EVP) of a file or of an open file's tail; one copy of the
 * digest loop for checkpoints and dump seals. Errors: "PATH: problem" in err, return -1. */
#include "sha256.h"

#include <errno.h>
#include <openssl/evp.h>
#include <string.h>

int ae_sha256_stream(FILE *f, long from, char hex[65], const char *path, ae_error *err) {
    if (fseek(f, from, SEEK_SET) != 0) return ae_fail(err, "%s: cannot seek: %s", path, strerror(errno));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = -1;
    if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        ae_fail(err, "%s: EVP_DigestInit_ex failed", path);
        goto done;
    }
    unsigned char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (EVP_DigestUpdate(ctx, buf, n) != 1) {
            ae_fail(err, "%s: EVP_DigestUpdate failed", path);
            goto done;
        }
    }
    if (ferror(f)) {
        ae_fail(err, "%s: read error: %s", path, strerror(errno));
        goto done;
    }
    unsigned char md[32];
    unsigned int mdlen = 0;
    if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32) {
        ae_fail(err, "%s: EVP_DigestFinal_ex failed", path);
        goto done;
    }
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    rc = 0;
done:
    EVP_MD_CTX_free(ctx);
    return rc;
}

int ae_sha256_file(const char *path, char hex[65], ae_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return ae_fail(err, "%s: cannot open: %s", path, strerror(errno));
    int rc = ae_sha256_stream(f, 0, hex, path, err);
    fclose(f);
    return rc;
}
