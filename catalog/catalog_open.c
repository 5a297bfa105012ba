/* catalog_open.c — the read-only opener of a catalog (see catalog_open.h).
 *
 * Why a fallback is needed: a catalog is in WAL mode, and SQLite reads a WAL database through its
 * -shm file (the WAL index), which a read-only connection still creates beside the database. In a
 * folder the reader cannot write, with no -shm there (a catalog.db copied alone, as the docs
 * allow), the first read fails with SQLITE_READONLY or SQLITE_CANTOPEN ("attempt to write a
 * readonly database"). SQLite's documented way to read such a file is the URI parameter
 * immutable=1 (https://sqlite.org/wal.html, "Read-Only Databases"): no locks, no -shm, no WAL.
 * That is only correct when the database file holds the whole catalog, i.e. when there is no
 * -wal beside it or it is empty (the writer's last close checkpoints the WAL into the file);
 * a -wal with frames holds committed runs the file lacks, so then the open is refused instead of
 * showing an old catalog. The same holds on a full disk (or past a file size limit), where the
 * -shm cannot be made or grown (SQLITE_IOERR, errno ENOSPC, EDQUOT or EFBIG). The fallback is
 * never tried when the first read works, so a catalog in a writable folder with room is read
 * with normal locking, safe against a writer running at that time. */
#include "catalog_open.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/percent_encode.h"
#include "sqlite_check.h"
#include "sqlite_time_limit.h"
#include "catalog.h"

/* "file:PATH?immutable=1" with PATH percent-encoded (all but '/'), so '?', '#', '%' and spaces in a
 * path stay part of the name. An absolute path gets an empty authority ("file:///abs") so a path
 * starting with "//" is not read as a host. */
static char *immutable_uri(const char *path) {
    const size_t n = strlen(path), cap = 3 * n + 32; /* n <= PATH_MAX-ish: stat() accepted it */
    char *u = malloc(cap);
    if (!u) return NULL;
    size_t k = (size_t)sprintf(u, "%s", path[0] == '/' ? "file://" : "file:");
    andrea_percent_encode(path, "/", u + k, cap - k);
    strcat(u, "?immutable=1");
    return u;
}

/* 1 when PATH-wal exists and holds something (frames the database file lacks), else 0. */
static int wal_has_frames(const char *path) {
    const size_t n = strlen(path);
    char *wal = malloc(n + 5);
    struct stat sb;
    if (!wal) return 1; /* unknown: do not assume the file is complete */
    memcpy(wal, path, n);
    memcpy(wal + n, "-wal", 5);
    const int has = stat(wal, &sb) == 0 && sb.st_size > 0;
    free(wal);
    return has;
}

static int open_with(const char *name, int flags, const char *path, sqlite3 **out, ae_error *err) {
    sqlite3 *db = NULL;
    const int rc = sqlite3_open_v2(name, &db, flags, NULL);
    if (rc != SQLITE_OK) {
        char why[512];
        andrea_fail(err, "%s: cannot open catalog: %s", path, andrea_sqlite_why(db, rc, why, sizeof why));
        sqlite3_close(db);
        return -1;
    }
    /* every reader's statements end: the process's time limit (sqlite_time_limit.h) */
    SQL_CHECK(path, db, andrea_sqlite_time_limit(db, andrea_sqlite_time_limit_default()), SQLITE_OK);
    *out = db;
    return 0;
fail:
    sqlite3_close(db);
    return -1;
}

/* The first read, which is where a WAL database needs its -shm. Returns SQLite's result code. */
static int first_read(sqlite3 *db) {
    return sqlite3_exec(db, "SELECT 1 FROM sqlite_master LIMIT 1", NULL, NULL, NULL);
}

int andrea_catalog_open_ro(const char *path, sqlite3 **out, ae_error *err) {
    struct stat sb;
    sqlite3 *db = NULL;
    *out = NULL;
    if (!path[0]) return andrea_fail(err, "the catalog's file name is empty"); /* as the writer says */
    /* SQLite would create a missing file in other modes; here it is the user's mistake. */
    if (stat(path, &sb) != 0) return andrea_fail(err, "%s: no such catalog", path);
    if (!S_ISREG(sb.st_mode)) return andrea_fail(err, "%s: not a regular file", path);
    if (open_with(path, SQLITE_OPEN_READONLY, path, &db, err)) return -1;
    SQL_CHECK(path, db, sqlite3_busy_timeout(db, 30000), SQLITE_OK);
    int rc = first_read(db) & 0xff; /* primary code of an extended one */
    const int sys = sqlite3_system_errno(db);
    const int full = rc == SQLITE_IOERR && (sys == ENOSPC || sys == EDQUOT || sys == EFBIG);
    if (rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN || full) {
        /* no -shm and no way to create it (see the top of this file), or no room to make it on a
         * full disk or past a file size limit */
        SQL_CHECK(path, db, sqlite3_close(db), SQLITE_OK);
        db = NULL;
        if (wal_has_frames(path))
            return andrea_fail(err, "%s: cannot read the catalog: %s and %s-wal beside it holds changes not yet in the "
                                    "file (%s, or let its writer finish)", path,
                               full ? "its disk is full" : "its folder is not writable", path,
                               full ? "make room" : "copy the folder somewhere writable");
        char *uri = immutable_uri(path);
        if (!uri) return andrea_fail(err, "%s: out of memory", path);
        const int orc = open_with(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, path, &db, err);
        free(uri);
        if (orc) return -1;
        SQL_CHECK(path, db, sqlite3_busy_timeout(db, 30000), SQLITE_OK);
        rc = first_read(db) & 0xff;
    }
    /* not a database at all (a text file named catalog.db): said here, since a query that reads
     * no table (`sql FILE "SELECT 1"`) would never find out */
    if (rc == SQLITE_NOTADB) {
        andrea_fail(err, "%s: not an SQLite database (an andrea catalog is one)", path);
        goto fail;
    }
    /* any other failure of the first read is left to the caller's first query, which reports it
     * in its own words */
    SQL_CHECK(path, db, sqlite3_exec(db, "PRAGMA query_only=ON", NULL, NULL, NULL), SQLITE_OK);
    /* another application's database (a `runs` table of its own) would fail later on a missing
     * column, or answer `diff` with "matches no checkpoint" */
    if (rc == SQLITE_OK && andrea_catalog_check_ours(db, path, err)) goto fail;
    *out = db;
    return 0;
fail:
    sqlite3_close(db);
    return -1;
}

int andrea_catalog_refuse_newer(sqlite3 *db, const char *path, int *version, ae_error *err) {
    sqlite3_stmt *st = NULL;
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
    const int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (v > ANDREA_CATALOG_SCHEMA_VERSION)
        return andrea_fail(err, "%s: catalog schema version %d is newer than this andrea's (%d)", path, v,
                           ANDREA_CATALOG_SCHEMA_VERSION);
    if (version) *version = v;
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}
