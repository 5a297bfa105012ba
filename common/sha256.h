/* sha256.h — content identity of checkpoints (OpenSSL's EVP digest; streamed, bounded memory). */
#ifndef ANDREA_SHA256_H
#define ANDREA_SHA256_H

#include <stdio.h>

#include "error.h"

/* Writes the lowercase hex digest of the file's bytes into hex (65 bytes with NUL). */
int andrea_sha256_file(const char *path, char hex[65], ae_error *err);

/* The lowercase hex digest of n bytes in memory (a sharded checkpoint's identity hashes the list
 * of its files' digests, engine/checkpoint_hash.h). -1 only when OpenSSL fails. */
int andrea_sha256_bytes(const void *data, size_t n, char hex[65]);

/* Same for the bytes of the open file f from offset `from` to EOF (the dump seal skips its
 * userblock); `path` only names the file in errors. Leaves f open; reads through its
 * descriptor, not its stdio buffer. */
int andrea_sha256_stream(FILE *f, long from, char hex[65], const char *path, ae_error *err);

/* andrea_sha256_file through 1 MiB reads that give up (-1, "PATH: hashing stopped") as soon as
 * *stop (read atomically) is set by another thread: a checkpoint hashed on a thread while it
 * loads (engine/checkpoint_hash.h) is abandoned when nobody asked for it. */
int andrea_sha256_file_until(const char *path, const int *stop, char hex[65], ae_error *err);

/* The dump seal's checksum: the bytes of the file at `path` from offset `from` to EOF are cut into
 * consecutive blocks of `block` bytes (the last one shorter), each block's sha256 is computed (in
 * parallel: one 64 MiB block per thread at a time, so sealing a 20 GB dump takes about a second
 * on 16 cores instead of ~10 s on one), and hex is the sha256 of the blocks' 32-byte digests
 * concatenated in file order (no bytes: sha256 of nothing). Python:
 *   sha256(b"".join(sha256(data[i:i + block]).digest() for i in range(0, len(data), block))) */
int andrea_sha256_blocks(const char *path, long from, size_t block, char hex[65], ae_error *err);

/* 1 when two 64-character hex digests are equal. Every byte is looked at, and no comparison
 * depends on where they differ: the usual way to compare digests, and here also what keeps a
 * coverage-guided fuzzer from lifting the expected digest out of memcmp/strcmp (libFuzzer's
 * comparison tracing) and forging a valid seal on its own (docs/reliability.md). */
int andrea_sha256_hex_equal(const char a[65], const char b[65]);

#endif
