/* summary.h — the short per-class table that classify and analyze end with:
 *   class        labelled heads (L.H score/baseline)
 *   prev_token   0.3 0.912/0.061  1.5 0.701/0.061
 * One line per suite; "-" when no head is labelled. */
#ifndef ANDREA_SUMMARY_H
#define ANDREA_SUMMARY_H

#include <stdio.h>

#include "analysis.h"

void andrea_summary_write(FILE *out, const andrea_analysis *a);

#endif
