/* catalog_sql.h — internal to the catalog: the one SQLite check macro and the shared opener.
 * SQL_CHECK(path, db, call, ok) evaluates call; unless it returns `ok` it fills `err` with
 * "PATH: CALL failed (FILE:LINE): sqlite3_errmsg" and jumps to the enclosing function's `fail:`
 * label (every caller owns an `ae_error *err` and a `fail:` cleanup path). */
#ifndef ANDREA_CATALOG_SQL_H
#define ANDREA_CATALOG_SQL_H

#include <sqlite3.h>

#include "../common/error.h"

#define SQL_CHECK(path, db, call, ok)                                                          \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != (ok)) {                                                                     \
            ae_fail(err, "%s: %s failed (%s:%d): %s", (path), #call, __FILE__, __LINE__,      \
                    (db) ? sqlite3_errmsg(db) : sqlite3_errstr(rc_));                          \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)

/* Opens (creating) the catalog for writing: WAL mode, 30 s busy timeout. */
int catalog_open_rw(const char *path, sqlite3 **out, ae_error *err);

#endif
