/* sqlite_check.h — the one SQLite check macro of andrea (house style: one check per library).
 * SQL_CHECK(path, db, call, ok) evaluates call; unless it returns `ok` it fills `err` with
 * "PATH: FUNCTION failed (FILE:LINE): sqlite3_errmsg" (FUNCTION: the call's text up to its '(',
 * so a long SQL literal stays out of the one-line message, or "a catalog query" when call is a
 * result code; FILE without its folders; sqlite3_errstr of the code when db is NULL, e.g. a
 * failed open; a damaged file says so: "the file is damaged") and jumps to the enclosing
 * function's `fail:` label. An I/O failure adds the OS's reason, which SQLite's "disk I/O error"
 * leaves out: "disk I/O error (No space left on device)" (andrea_sqlite_why, also for the calls
 * that report in their own words). A statement stopped by its time limit (sqlite_time_limit.h)
 * says so: "query stopped after 60 s, the time limit of a catalog query (...)".
 * Contract for callers: an `ae_error *err` in scope and a `fail:` cleanup path. */
#ifndef ANDREA_SQLITE_CHECK_H
#define ANDREA_SQLITE_CHECK_H

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "../common/error.h"
#include "sqlite_time_limit.h"

/* SQLite's message for a failed call with result code rc (sqlite3_errmsg, or sqlite3_errstr(rc)
 * when db is NULL), followed by the OS error behind it when the failure is an I/O one (SQLite
 * records errno for SQLITE_IOERR and SQLITE_CANTOPEN only): written into buf, which is returned. */
static inline const char *andrea_sqlite_why(sqlite3 *db, int rc, char *buf, size_t cap) {
    const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    const int primary = rc & 0xff, sys = db ? sqlite3_system_errno(db) : 0; /* errno of this failure when I/O */
    if (primary == SQLITE_INTERRUPT && andrea_sqlite_time_limit_stopped() > 0)
        snprintf(buf, cap, "query stopped after %g s, the time limit of a catalog query (a view or query that never "
                           "ends?)", andrea_sqlite_time_limit_stopped());
    else if (sys > 0 && (primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN))
        snprintf(buf, cap, "%s (%s)", msg, strerror(sys));
    else
        snprintf(buf, cap, "%s", msg);
    return buf;
}

#define SQL_CHECK(path, db, call, ok)                                                          \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != (ok)) {                                                                     \
            const char *fn_ = #call;                                                           \
            int fnl_ = (int)strcspn(fn_, "(");                                                 \
            if (!fn_[fnl_]) fn_ = "a catalog query", fnl_ = 15;                                \
            const int damaged_ = (rc_ & 0xff) == SQLITE_CORRUPT || (rc_ & 0xff) == SQLITE_NOTADB; \
            char why_[512];                                                                    \
            andrea_fail(err, "%s: %.*s failed (%s:%d): %s%s", (path), fnl_, fn_, AE_SOURCE_FILE, __LINE__, \
                        andrea_sqlite_why((db), rc_, why_, sizeof why_),                       \
                        damaged_ ? " (the file is damaged: restore it from a copy, or write a new one)" : ""); \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)

#endif
