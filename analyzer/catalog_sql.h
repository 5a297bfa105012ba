/* catalog_sql.h — internal to the catalog: the shared opener; the SQLite check macro SQL_CHECK
 * comes from common/sqlite_check.h (every caller owns an `ae_error *err` and a `fail:` path). */
#ifndef ANDREA_CATALOG_SQL_H
#define ANDREA_CATALOG_SQL_H

#include <sqlite3.h>

#include "../common/error.h"
#include "../common/sqlite_check.h"

/* Opens (creating) the catalog for writing: WAL mode, 30 s busy timeout. */
int andrea_catalog_open_rw(const char *path, sqlite3 **out, ae_error *err);
/* Takes the write lock, retried while another writer holds it (each run is one transaction). */
int andrea_catalog_begin_immediate(sqlite3 *db, const char *path, ae_error *err);
/* Binds v, or NULL when v is not finite (NaN: not measured). */
int andrea_catalog_bind_real_or_null(sqlite3_stmt *st, int i, double v);
/* The models table's name of a checkpoint: its file name without .bin / .safetensors. */
void andrea_catalog_model_name(const char *path, char *out, size_t cap);

#endif
