/* catalog.h — the SQLite head catalog (schema: docs/catalog.md).
 *
 * Job: store analyses of many checkpoints in one file, and answer queries on it.
 * Invariants:
 *   - the database is in WAL mode with a 30 s busy timeout; a writer takes BEGIN IMMEDIATE
 *     (retried while another writer holds the lock) and writes ONE run in ONE transaction, so a
 *     crash at any point leaves the catalog exactly as it was before the run;
 *   - a model is identified by its checkpoint sha256; re-analysing a checkpoint with the same
 *     settings (settings JSON equal byte for byte) replaces that run's rows;
 *   - runs coexist: for each checkpoint and class the view's `current` run is the newest run that
 *     scored that class on that checkpoint; every connection turns foreign keys on, and rows of a
 *     deleted run (or model) go with it (ON DELETE CASCADE, plus triggers for clients without keys);
 *   - schema version 2; a version-1 catalog is migrated inside the next writer's transaction;
 *   - readers (heads, sql) open the file read-only: a missing file is an error, never created;
 *   - every parameter from the user is bound with sqlite3_bind_*, never pasted into SQL.
 * Failure contract: -1 with "DB: <call> failed (file:line): sqlite message" or "DB: problem".
 * Test hook (test builds only, -DANDREA_TESTING): env ANDREA_TEST_CRASH_AT=mid-run makes andrea_catalog_write SIGKILL its own process halfway
 * through inserting the run's rows (inside the transaction).
 */
#ifndef ANDREA_CATALOG_H
#define ANDREA_CATALOG_H

#include <stdint.h>
#include <stdio.h>

#include "../analyzer/analysis.h"
#include "catalog_open.h"
#include "sqlite_time_limit.h"

/* Whether db_path can take this run's rows, checked before the work so that a mistake costs no
 * analysis: a missing file (a new catalog), or a regular file that is an andrea catalog (the same
 * rule as the writer's: andrea_catalog_check_ours). Devices, folders, pipes and other SQLite or other
 * files are refused with one line; nothing is created or changed. */
int andrea_catalog_check_writable(const char *db_path, ae_error *err);
/* Writes one analysis as one run. run_id (may be NULL) receives the new run's id. */
int andrea_catalog_write(const char *db_path, const andrea_analysis *a, int64_t *run_id, ae_error *err);

/* The series of a checkpoint name into out: for "RUN/STEPNAME" (a name that is only a step, with
 * its run) RUN; else the name with its step part removed ("run-step00400" -> "run"; the exact rule
 * is in docs/catalog.md). */
void andrea_catalog_series_from_name(const char *name, char *out, size_t cap);

/* ---------- queries ---------- */

/* A result set held in memory: every cell as text (NULL = SQL NULL) plus whether it was numeric. */
typedef struct {
    int n_cols, n_rows;
    char **col_names;     /* [n_cols] */
    char **cells;         /* [n_rows * n_cols]; a REAL as %.17g (exact round trip) */
    unsigned char *numeric; /* [n_rows * n_cols]: 1 integer, 2 real, 0 text/NULL */
    size_t *lens;         /* [n_rows * n_cols] bytes of each cell (a text may hold NUL bytes), or NULL: C strings */
    char note[512];       /* what the rows leave out (heads --pivot step: checkpoints without a step), or "" */
} catalog_rows;

void andrea_catalog_rows_free(catalog_rows *r);

typedef enum { CATALOG_TABLE = 0, CATALOG_CSV = 1, CATALOG_JSON = 2 } catalog_format;
/* Parses "table" | "csv" | "json"; -1 when unknown. */
int andrea_catalog_format_parse(const char *s);
/* Writes rows to out in the format: an aligned text table (REALs shown with 6 digits, control
 * characters escaped: newline as \n), RFC 4180 CSV, or a JSON array of objects; CSV and JSON
 * print REALs with %.17g (exact round trip). */
int andrea_catalog_rows_write(FILE *out, const catalog_rows *r, catalog_format fmt, ae_error *err);

/* What one query may cost: a query that has spent timeout_s seconds inside SQLite is stopped (0 = no
 * limit), and a result set that would take more than max_bytes of memory is refused (0 = the default,
 * CATALOG_RESULT_MAX_BYTES). A recursive CTE without an end would otherwise run until killed, and
 * all rows are held in memory (the table format aligns its columns over the whole result). */
typedef struct {
    double timeout_s;
    size_t max_bytes;
} catalog_limits;
#define CATALOG_TIMEOUT_DEFAULT_S ANDREA_SQLITE_TIME_LIMIT_DEFAULT_S /* every catalog connection's (sqlite_time_limit.h) */
#define CATALOG_RESULT_MAX_BYTES ((size_t)1 << 30)

typedef struct {
    const char *class_name; /* NULL = any; else a class the catalog holds */
    int has_layer;
    int layer;
    int has_head;           /* --head L.H */
    int head_layer, head_head;
    int has_step;
    long long step;
    int has_min_score;
    double min_score;
    const char *model;      /* model name, series name, path or sha256 prefix; NULL = any */
    const char *series;     /* series name; NULL = any */
    int pivot_step;         /* 1: one row per (class, head), one column per step (needs series) */
    int all;                /* 0: labelled heads only (the pivot shows every head of a class) */
} catalog_heads_filter;

/* The current heads (docs/catalog.md: the newest run that scored a suite on a checkpoint) matching
 * the filter, from the head_catalog view. Returns 0; -1 on a catalog error; -2 (err says why) when
 * the filter names a class the catalog does not hold, a layer/head beyond every model's shape, or
 * a --model, --series or --step that matches no checkpoint: a usage error, not an empty answer. With pivot_step, cells are the score followed by "*" when
 * the head is labelled at that step (table: 3 decimals; CSV/JSON: %.17g). */
int andrea_catalog_heads(const char *db_path, const catalog_heads_filter *f, const catalog_limits *lim, catalog_rows *out,
                  ae_error *err);

/* Runs ONE read-only statement: the file is opened read-only, query_only is on, and an
 * authorizer refuses ATTACH/DETACH, writes, schema changes and pragma writes; several statements
 * in one string are refused. */
int andrea_catalog_sql(const char *db_path, const char *sql, const catalog_limits *lim, catalog_rows *out, ae_error *err);

#endif
