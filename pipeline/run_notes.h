/* run_notes.h — the note lines a scored run leaves on stderr.
 *
 * Job: one "andrea CMD: note: ..." line per thing a reader should know about a run that still
 * succeeded (a checkpoint the catalog knew under another name, a --rules entry naming no suite).
 * Text from inputs is shown through andrea_shown: no input can split a line.
 */
#ifndef ANDREA_RUN_NOTES_H
#define ANDREA_RUN_NOTES_H

#include "../analyzer/analysis.h"
#include "../analyzer/rules.h"
#include "../catalog/catalog_circuits.h"

/* One stderr note per --rules entry that names no suite of the run a (rules for built-in or user
 * suites that this run did not probe, or a typo). */
void andrea_note_unused_rules(const char *cmd, const andrea_rules *r, const andrea_analysis *a);
/* One stderr note "andrea CMD: note: ..." per written catalog entry that has one (a checkpoint the
 * catalog knew under another name or step). */
void andrea_note_catalog_entries(const char *cmd, const andrea_catalog_entry *e, int n);

#endif
