/* percent_encode.h — bytes as RFC 3986 percent-encoding, for a path inside a URI or a link.
 * Invariant: every byte but the unreserved ones (A-Z a-z 0-9 - . _ ~) and those in `keep` becomes
 * %XX, so '?', '#', '%', spaces and control bytes in a name stay part of the name. */
#ifndef ANDREA_PERCENT_ENCODE_H
#define ANDREA_PERCENT_ENCODE_H

#include <stddef.h>

/* The encoding of s into out (cap >= 1 bytes, NUL-terminated). When it does not fit it is cut
 * before the first escape that does not (never inside one); returns the number of bytes of s
 * encoded, strlen(s) when all of it fit. keep: further bytes left as they are ("/" for a path,
 * "" for one path segment). The whole encoding never needs more than 3 * strlen(s) + 1 bytes. */
size_t andrea_percent_encode(const char *s, const char *keep, char *out, size_t cap);

#endif
