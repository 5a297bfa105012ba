/* analyze_print.h — what `andrea analyze` prints of its results.
 *
 * Job: the printer andrea_analyze (pipeline/analyze.h) hands results to: per checkpoint its line,
 * the labelled heads per class (analyzer/summary.h), the catalog and report paths, and with
 * --timing where the time went (stderr); per series the table of labelled heads per step. Paths
 * are shown relative to the working folder when below it, control bytes as '?'.
 */
#ifndef ANDREA_CLI_ANALYZE_PRINT_H
#define ANDREA_CLI_ANALYZE_PRINT_H

#include "../pipeline/analyze.h"

andrea_analyze_printer cli_analyze_printer(void);

#endif
