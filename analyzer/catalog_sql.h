/* catalog_sql.h — internal to the catalog: the shared opener; the SQLite check macro SQL_CHECK
 * comes from common/sqlite_check.h (every caller owns an `ae_error *err` and a `fail:` path). */
#ifndef ANDREA_CATALOG_SQL_H
#define ANDREA_CATALOG_SQL_H

#include <sqlite3.h>

#include "../common/error.h"
#include "../common/sqlite_check.h"

/* Opens (creating) the catalog for writing: WAL mode, 30 s busy timeout. */
int catalog_open_rw(const char *path, sqlite3 **out, ae_error *err);

#endif
