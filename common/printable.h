/* printable.h — text from outside files made safe for a one-line error message.
 * Invariant: the result is NUL-terminated printable ASCII that fits in cap bytes. */
#ifndef ANDREA_PRINTABLE_H
#define ANDREA_PRINTABLE_H

#include <stddef.h>

/* Copies s into buf for an error message: bytes outside printable ASCII become '?', and long
 * strings are cut with "...", so text from a hostile file can never split the one-line message. */
const char *andrea_printable(const char *s, char *buf, size_t cap);

/* s for a progress, note or summary line on a terminal: control bytes (a newline or escape
 * sequence in a path) become '?', UTF-8 stays (paths print as they are), cut to cap - 1 bytes;
 * returns buf. */
const char *andrea_shown(const char *s, char *buf, size_t cap);

#endif
