/* text.h — strings for the report: HTML escaping and token labels (pages are built in the one
 * growable buffer, common/buf.h).
 *
 * Job: every piece of text that reaches HTML goes through andrea_html_add (escapes & < > " ' so
 * it is safe in element content and in quoted attribute values, and shows bytes that are not
 * printable UTF-8 as \xNN so a page is valid UTF-8); every token shown goes through
 * andrea_token_label, which makes invisible and non-text bytes visible and unambiguous.
 * Invariants: a page buffer that ran out of memory (or overflowed) stays failed, and its text is
 * not used (andrea_buf_failed is checked before writing a file); andrea_token_label output is always
 * NUL-terminated UTF-8 that fits cap.
 */
#ifndef ANDREA_REPORT_TEXT_H
#define ANDREA_REPORT_TEXT_H

#include <stddef.h>

#include "../common/buf.h"

/* Appends s to b with & < > " ' replaced by character references, and every byte that is not
 * part of well-formed, printable UTF-8 (malformed or cut sequences, surrogates, C1 controls, the
 * bidirectional controls U+061C, U+200E/F, U+202A-202E, U+2066-2069) and
 * every C0 control but tab and newline (DEL too) shown as the text "\xNN": names are file names,
 * which may hold any byte, and a page declared UTF-8 stays valid UTF-8. */
void andrea_html_add(andrea_buf *b, const char *s);

/* Length (2-4) of the well-formed UTF-8 sequence of a printable character (not C1, not a
 * surrogate, not overlong, not a bidirectional control) at the start of the NUL-terminated s, or 0. Never reads past the NUL. */
int andrea_utf8_printable_len(const char *s);

typedef enum {
    LABEL_PNG = 0,   /* PNG labels: printable ASCII and what the PNG font draws (Latin-1, common
                      * punctuation), every other byte as \xNN */
    LABEL_UTF8 = 1,  /* HTML: well-formed printable UTF-8 sequences are kept, but the invisible
                      * ones (no-break space, soft hyphen, zero-width characters) */
} label_mode;

/* A visible label for a token's bytes:
 *   space -> "·", newline -> "⏎", tab -> "→", backslash -> "\\", carriage return -> "\r",
 *   other control bytes, bytes of malformed UTF-8 and (in LABEL_PNG) characters the PNG font
 *   lacks -> "\xNN";
 * BOS (is_bos) -> "<bos>". Because a literal "·", "⏎", "→" or "…" in the text is escaped as
 * \xNN (in both modes), each label reads back unambiguously. At most max_chars characters are
 * kept; a longer label ends in "…". Returns out. */
char *andrea_token_label(const unsigned char *bytes, int n, int is_bos, label_mode mode, int max_chars, char *out,
                  size_t cap);

/* Copies name into out keeping [A-Za-z0-9_-] and turning everything else into '_' (for file
 * names made from suite names, which come from user probe files). */
void andrea_file_slug(const char *name, char *out, size_t cap);

/* The file-name form of a suite name, one to one: [A-Za-z0-9_-] kept, every other byte written
 * as '.' and two lowercase hex digits ("a.b" -> "a.2eb"), so two names never share a form and a
 * form never holds '/', a leading '.' or ".." (a report names its suites' heatmaps and thumbnail
 * grids after them, docs/report.md). A name of up to 63 bytes fits ANDREA_FILE_TAG_MAX; a longer
 * one is cut at a whole byte's form. */
#define ANDREA_FILE_TAG_MAX 192
void andrea_file_tag(const char *name, char *out, size_t cap);

#endif
