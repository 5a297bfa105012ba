/* sqlite_check.h — the one SQLite check macro of andrea (house style: one check per library).
 * SQL_CHECK(path, db, call, ok) evaluates call; unless it returns `ok` it fills `err` with
 * "PATH: FUNCTION failed (FILE:LINE): sqlite3_errmsg" (FUNCTION: the call's text up to its '(',
 * so a long SQL literal stays out of the one-line message; sqlite3_errstr of the code when db is NULL,
 * e.g. a failed open) and jumps to the enclosing function's `fail:` label.
 * Contract for callers: an `ae_error *err` in scope and a `fail:` cleanup path. */
#ifndef ANDREA_SQLITE_CHECK_H
#define ANDREA_SQLITE_CHECK_H

#include <sqlite3.h>
#include <string.h>

#include "error.h"

#define SQL_CHECK(path, db, call, ok)                                                          \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != (ok)) {                                                                     \
            andrea_fail(err, "%s: %.*s failed (%s:%d): %s", (path), (int)strcspn(#call, "("), #call,  \
                    __FILE__, __LINE__,                                                        \
                    (db) ? sqlite3_errmsg(db) : sqlite3_errstr(rc_));                          \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)

#endif
