/* sha256.h — content identity of checkpoints (OpenSSL's EVP digest; streamed, bounded memory). */
#ifndef ANDREA_SHA256_H
#define ANDREA_SHA256_H

#include <stdio.h>

#include "error.h"

/* Writes the lowercase hex digest of the file's bytes into hex (65 bytes with NUL). */
int ae_sha256_file(const char *path, char hex[65], ae_error *err);

/* Same for the bytes of the open file f from offset `from` to EOF (the dump seal skips its
 * userblock); `path` only names the file in errors. Leaves f open, positioned at EOF. */
int ae_sha256_stream(FILE *f, long from, char hex[65], const char *path, ae_error *err);

#endif
