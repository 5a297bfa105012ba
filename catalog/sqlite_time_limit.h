/* sqlite_time_limit.h — the one time limit of andrea's SQLite queries (every catalog reader and
 * writer gets it where the catalog is opened: catalog_open.c, catalog.c).
 *
 * Job: stop a statement that runs too long inside SQLite (a catalog whose head_catalog view is an
 * endless recursive CTE made `render` run until killed), so that every command that reads a
 * catalog ends, with one line saying why.
 * What counts: the time spent inside SQLite by an outermost statement and every statement run
 * while it is open (the reader's own work between rows does not count, nor does waiting for a
 * lock: busy_timeout's sleeps fall between two of SQLite's progress calls, and no gap between two
 * calls counts for more than 1 s). The clock starts again at each outermost statement.
 * Invariants: the limit is per connection, set when it is opened; it lives as long as the
 * connection (freed by sqlite3_close); a statement stopped returns SQLITE_INTERRUPT, and
 * andrea_sqlite_why (sqlite_check.h) words that as the limit that stopped it.
 * Failure contract: andrea_sqlite_time_limit returns SQLite's result code (SQLITE_NOMEM). */
#ifndef ANDREA_SQLITE_TIME_LIMIT_H
#define ANDREA_SQLITE_TIME_LIMIT_H

#include <sqlite3.h>

/* What a connection gets when no command says otherwise (`--timeout S` of heads, sql, render). */
#define ANDREA_SQLITE_TIME_LIMIT_DEFAULT_S 60.0

/* Sets db's time limit to `seconds` (0: none), replacing an earlier one. SQLITE_OK or a code. */
int andrea_sqlite_time_limit(sqlite3 *db, double seconds);

/* The process-wide limit that connections opened from now on get: the CLI sets it from --timeout
 * before it opens any catalog; ANDREA_SQLITE_TIME_LIMIT_DEFAULT_S until then. */
void andrea_sqlite_time_limit_set_default(double seconds);
double andrea_sqlite_time_limit_default(void);

/* The limit, in seconds, of the last statement this process stopped (0 when none was), for the
 * message of its SQLITE_INTERRUPT. */
double andrea_sqlite_time_limit_stopped(void);

#endif
