/* printable.h — text from outside files made safe for a one-line error message.
 * Invariant: the result is NUL-terminated printable ASCII that fits in cap bytes. */
#ifndef ANDREA_PRINTABLE_H
#define ANDREA_PRINTABLE_H

#include <stddef.h>

/* Copies s into buf for an error message: bytes outside printable ASCII become '?', and long
 * strings are cut with "...", so text from a hostile file can never split the one-line message. */
const char *andrea_printable(const char *s, char *buf, size_t cap);

#endif
