/* sha256.h — content identity of checkpoints (OpenSSL's EVP digest; streamed, bounded memory). */
#ifndef ANDREA_SHA256_H
#define ANDREA_SHA256_H

#include "error.h"

/* Writes the lowercase hex digest of the file's bytes into hex (65 bytes with NUL). */
int ae_sha256_file(const char *path, char hex[65], ae_error *err);

#endif
