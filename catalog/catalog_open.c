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
#include "../common/printable.h"

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

/* The columns an unmarked catalog's tables have had since schema 1 (what MIGRATE_1_COPY reads).
 * A table of andrea's name without them is someone else's ("runs(x)"): refused before any change,
 * where the writer used to switch the file to WAL and fail after the work on "no such column". */
static const char *const CORE_COLUMNS[][12] = {
    {"models", "id", "sha256", "name", "path", "config", "n_layer", "n_head", "d_model", "head_dim", "step", NULL},
    {"runs", "id", "model_id", "time", "andrea_version", "suites", "settings", "dump_path", NULL},
    {"suites", "run_id", "class", "n_items", "n_queries", "min_score", "min_ratio", "min_margin", NULL},
    {"head_scores", "run_id", "layer", "head", "class", "score", "baseline", "control", "n_queries", NULL},
    {"labels", "run_id", "layer", "head", "class", "rule", NULL},
};

/* -1 (err) when table `name` lacks one of its CORE_COLUMNS; 0 when it has them all or has none listed. */
static int check_core_columns(sqlite3 *db, const char *path, const char *name, ae_error *err) {
    for (size_t t = 0; t < sizeof CORE_COLUMNS / sizeof CORE_COLUMNS[0]; t++) {
        if (strcmp(CORE_COLUMNS[t][0], name)) continue;
        for (int c = 1; CORE_COLUMNS[t][c]; c++) {
            sqlite3_stmt *st = NULL;
            int found = 0;
            SQL_CHECK(path, db, sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", -1, &st, NULL),
                      SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_text(st, 2, CORE_COLUMNS[t][c], -1, SQLITE_STATIC), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
            found = sqlite3_column_int(st, 0) > 0;
            sqlite3_finalize(st);
            if (!found)
                return andrea_fail(err, "%s: not an andrea catalog (a SQLite database whose table '%s' has no column '%s'); "
                                        "andrea reads and writes only its own catalogs: name a new file or an andrea catalog",
                                   path, name, CORE_COLUMNS[t][c]);
            continue;
        fail:
            sqlite3_finalize(st);
            return -1;
        }
    }
    return 0;
}

/* Whether the database at db is one andrea may write into: empty (a new catalog), marked with
 * andrea's application_id, or unmarked (catalogs before the mark) with only andrea's tables, each
 * with its columns. Any other SQLite file given to --db by mistake is refused before anything in
 * it changes: the schema, the WAL switch and the mark would otherwise land in someone else's
 * database. */
int andrea_catalog_check_ours(sqlite3 *db, const char *path, ae_error *err) {
    static const char *const ours[] = {"models", "runs", "suites", "head_scores", "labels", "head_catalog",
                                       CATALOG_CIRCUITS_NAMES, NULL};
    sqlite3_stmt *st = NULL;
    int ret = -1;
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
    const sqlite3_int64 app = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    if (app == ANDREA_CATALOG_APPLICATION_ID) return 0;
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
                                 " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
                                 -1, &st, NULL),
              SQLITE_OK);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int known = 0;
        for (int i = 0; ours[i] && name; i++) known |= !strcmp(name, ours[i]);
        if (app != 0 || !known) {
            char shown[64];
            andrea_printable(name ? name : "", shown, sizeof shown);
            andrea_fail(err, "%s: not an andrea catalog (a SQLite database with %s '%s'); andrea reads and writes only "
                         "its own catalogs: name a new file or an andrea catalog",
                    path, app != 0 ? "another application's id and the table" : "the table", shown);
            goto fail;
        }
        if (check_core_columns(db, path, name, err)) goto fail;
    }
    SQL_CHECK(path, db, rc, SQLITE_DONE);
    ret = 0;
fail:
    sqlite3_finalize(st);
    return ret;
}

/* A read-write connection that reads once and closes: the last connection to close a WAL database
 * checkpoints it and deletes -wal and -shm (https://sqlite.org/wal.html, "Persistence of WAL
 * mode"); a read-only one cannot, which is why they stay after the report's reads. */
int andrea_catalog_tidy(const char *path, ae_error *err) {
    sqlite3 *db = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0; /* nothing written: nothing to tidy */
    if (open_with(path, SQLITE_OPEN_READWRITE, path, &db, err)) return -1;
    /* busy (another process reading or writing): it tidies when it closes, so the result is not ours */
    (void)first_read(db);
    SQL_CHECK(path, db, sqlite3_close(db), SQLITE_OK);
    return 0;
fail:
    sqlite3_close(db);
    return -1;
}
