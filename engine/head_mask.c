/* head_mask.c — see head_mask.h. */
#include "head_mask.h"

#include <stdio.h>
#include <string.h>

#include "../common/printable.h"

/* Reads the digits of one LAYER or HEAD number at *p (at most 9: no overflow), advancing *p. */
static int head_number(const char **p, long *out) {
    const char *q = *p;
    long v = 0;
    while (*q >= '0' && *q <= '9' && q - *p < 9) v = v * 10 + (*q++ - '0');
    if (q == *p || (*q >= '0' && *q <= '9')) return -1;
    *p = q;
    *out = v;
    return 0;
}

int andrea_parse_heads(const char *spec, const andrea_config *c, unsigned char *mask, ae_error *err) {
    memset(mask, 0, (size_t)c->n_layer * (size_t)c->n_head);
    const char *p = spec;
    char shown[64];
    if (!*p) return andrea_fail(err, "--heads: empty list");
    for (;;) {
        /* one entry: digits '.' digits, then ',' and another entry or the end; nothing else
         * (no signs, spaces or empty entries, which strtol would have let through) */
        const char *entry = p;
        size_t entry_len = strcspn(entry, ",");
        long l, h;
        if (head_number(&p, &l) || *p++ != '.' || head_number(&p, &h) || (*p && *p != ',')) {
            char typed[64];
            snprintf(typed, sizeof typed, "%.*s", (int)(entry_len < 60 ? entry_len : 60), entry);
            return andrea_fail(err, "--heads: '%s' is not LAYER.HEAD (e.g. 0.3)", andrea_printable(typed, shown, sizeof shown));
        }
        if (l >= c->n_layer || h >= c->n_head)
            return andrea_fail(err, "--heads: head %ld.%ld does not exist (layers 0..%d, heads 0..%d)", l, h,
                           c->n_layer - 1, c->n_head - 1);
        if (mask[l * c->n_head + h]) return andrea_fail(err, "--heads: head %ld.%ld is given twice", l, h);
        mask[l * c->n_head + h] = 1;
        if (!*p) return 0;
        p++; /* the ',' */
        if (!*p) return andrea_fail(err, "--heads: '%s' ends with ','", andrea_printable(spec, shown, sizeof shown));
    }
}
