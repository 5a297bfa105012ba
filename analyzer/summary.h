/* summary.h — the short per-class table that classify and analyze end with:
 *   class        labelled heads (L.H score/baseline, causal evidence)
 *   prev_token   0.3 0.912/0.061 necessary 1.5 0.701/0.061 redundant
 * One line per suite ("-" when no head is labelled or all are pattern_only); the labelled heads
 * whose verdict is pattern_only follow apart, under a line that says what that means. */
#ifndef ANDREA_SUMMARY_H
#define ANDREA_SUMMARY_H

#include <stdio.h>

#include "analysis.h"

void andrea_summary_write(FILE *out, const andrea_analysis *a);

#endif
