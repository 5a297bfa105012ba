/* report_assets.h — the browser side of the report (reports/assets/andrea.js, andrea.css), compiled
 * into the binary by reports/assets/embed.cmake so that an installed andrea needs no data folder
 * to make interactive pages: report_interactive.c writes them to OUT/assets/.
 * Invariants: the table ends with a {NULL, NULL, 0} entry; data[len] == 0 (text assets). */
#ifndef ANDREA_REPORT_ASSETS_H
#define ANDREA_REPORT_ASSETS_H

#include <stddef.h>

typedef struct {
    const char *name;          /* file name under assets/ */
    const unsigned char *data;
    size_t len;
} report_asset;

extern const report_asset andrea_report_assets[];

#endif
