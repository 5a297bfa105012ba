/* sqlite_check.h — the one SQLite check macro of andrea (house style: one check per library).
 * SQL_CHECK(path, db, call, ok) evaluates call; unless it returns `ok` it fills `err` with
 * "PATH: FUNCTION failed (FILE:LINE): sqlite3_errmsg" (FUNCTION: the call's text up to its '(',
 * so a long SQL literal stays out of the one-line message, or "a catalog query" when call is a
 * result code; FILE without its folders; sqlite3_errstr of the code when db is NULL, e.g. a
 * failed open; a damaged file says so: "the file is damaged") and jumps to the enclosing
 * function's `fail:` label.
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
            const char *fn_ = #call;                                                           \
            int fnl_ = (int)strcspn(fn_, "(");                                                 \
            if (!fn_[fnl_]) fn_ = "a catalog query", fnl_ = 15;                                \
            const int damaged_ = (rc_ & 0xff) == SQLITE_CORRUPT || (rc_ & 0xff) == SQLITE_NOTADB; \
            andrea_fail(err, "%s: %.*s failed (%s:%d): %s%s", (path), fnl_, fn_, AE_SOURCE_FILE, __LINE__, \
                        (db) ? sqlite3_errmsg(db) : sqlite3_errstr(rc_),                       \
                        damaged_ ? " (the file is damaged: restore it from a copy, or write a new one)" : ""); \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)

#endif
