/* catalog_sql.h — internal to the catalog: the shared opener; the SQLite check macro SQL_CHECK
 * comes from catalog/sqlite_check.h (every caller owns an `ae_error *err` and a `fail:` path). */
#ifndef ANDREA_CATALOG_SQL_H
#define ANDREA_CATALOG_SQL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../analyzer/analysis.h"
#include "sqlite_check.h"

/* Opens (creating) the catalog for writing: WAL mode, 30 s busy timeout. */
int andrea_catalog_open_rw(const char *path, sqlite3 **out, ae_error *err);
/* Takes the write lock, retried while another writer holds it (each run is one transaction). */
int andrea_catalog_begin_immediate(sqlite3 *db, const char *path, ae_error *err);
/* Inside the writer's transaction: the whole schema made current (refusing a newer one,
 * migrating schema 1), the head_catalog view anew, the mark. */
int andrea_catalog_prepare(sqlite3 *db, const char *path, ae_error *err);
/* Inside the writer's transaction, after andrea_catalog_prepare: one analysis as one run
 * (replacing the run of the same checkpoint and settings). run_id may be NULL; note (may be NULL,
 * note_cap bytes) says when the checkpoint was known under another name or step, else "". */
int andrea_catalog_insert_run(sqlite3 *db, const char *path, const andrea_analysis *a, int64_t *run_id, char *note,
                              size_t note_cap, ae_error *err);
/* COMMIT and close; on failure the transaction is rolled back and the connection closed. */
int andrea_catalog_commit_close(sqlite3 *db, const char *path, ae_error *err);
/* ROLLBACK (when a transaction is open) and close. */
void andrea_catalog_rollback_close(sqlite3 *db);
/* Binds v, or NULL when v is not finite (NaN: not measured). */
int andrea_catalog_bind_real_or_null(sqlite3_stmt *st, int i, double v);
/* The models table's name of a checkpoint: its file name without .bin / .safetensors; a name that
 * is only a step (andrea_is_step_name) with its folder's name before it and a '/':
 * "/r/run1/checkpoint-500" -> "run1/checkpoint-500" (none when the path names no folder). */
void andrea_catalog_model_name(const char *path, char *out, size_t cap);

#endif
