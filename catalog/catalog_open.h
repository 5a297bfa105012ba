/* catalog_open.h — the one read-only opener of a catalog, shared by every reader (heads, sql,
 * diff, render's report and series pages, the circuit reader).
 *
 * Job: open an existing catalog for reading, wherever it lies, without ever writing it.
 * Invariants:
 *   - the file must exist and be a regular file; it is never created;
 *   - the connection is SQLITE_OPEN_READONLY with query_only on and a 30 s busy timeout;
 *   - its statements stop at the process's time limit (catalog/sqlite_time_limit.h: 60 s unless the
 *     command's --timeout said otherwise), so no reader waits on a view that never ends;
 *   - a catalog in a folder the reader cannot write (a copy of catalog.db on read-only media, a
 *     colleague's folder) is read too: see andrea_catalog_open_ro for when and why it is opened
 *     immutable.
 * Failure contract: -1 with "PATH: problem" ("no such catalog", "not a regular file", "cannot
 * open catalog: ...", or a WAL beside it that cannot be read); *out is NULL then.
 */
#ifndef ANDREA_CATALOG_OPEN_H
#define ANDREA_CATALOG_OPEN_H

#include <sqlite3.h>

#include "../common/error.h"

/* The catalog schema this andrea writes (docs/catalog.md; older ones are upgraded on write). */
#define ANDREA_CATALOG_SCHEMA_VERSION 5
/* PRAGMA application_id of an andrea catalog ("ANDR"): tells it from other SQLite databases. */
#define ANDREA_CATALOG_APPLICATION_ID 0x414E4452

/* The tables and views andrea_catalog_circuits_schema creates (for the writer's is-this-ours check). */
#define CATALOG_CIRCUITS_NAMES \
    "circuit_runs", "circuit_composition", "circuit_heads", "head_composition", "head_weights"

/* Opens PATH read-only into *out (close with sqlite3_close). */
int andrea_catalog_open_ro(const char *path, sqlite3 **out, ae_error *err);

/* -1 ("PATH: catalog schema version N is newer than this andrea's") when the catalog was written
 * by a newer andrea, whose tables this one may misread; 0 otherwise, with the catalog's schema
 * version in *version when version is not NULL. */
int andrea_catalog_refuse_newer(sqlite3 *db, const char *path, int *version, ae_error *err);
/* 0 when the open database is empty, marked as andrea's (application_id), or unmarked with only
 * andrea's tables and their columns (a catalog from before the mark); else -1 with "PATH: a SQLite
 * database that is not an andrea catalog (...)". Reads only; the writer applies it before any
 * change. */
int andrea_catalog_check_ours(sqlite3 *db, const char *path, ae_error *err);

/* Folds the catalog's -wal into the file and removes -wal and -shm when no other connection has it
 * open: what the last read-only reader (the report's) leaves beside catalog.db after `analyze`.
 * Best effort (the files are SQLite's own and harmless): 0 whether or not anything was removed;
 * -1 only when the open itself fails, with err set. */
int andrea_catalog_tidy(const char *path, ae_error *err);

#endif
