/* test_catalog_connections_stop_endless_queries — every catalog connection, the readers' (report,
 * series page, heads, sql, diff, circuits: andrea_catalog_open_ro) and the writer's
 * (andrea_catalog_open_rw, analyze's and classify's own reads), stops a statement at the process's
 * time limit (catalog/sqlite_time_limit.h), and the message says so in one line; time the reader
 * spends between rows does not count. Limits are short (0.3 s) and only time inside SQLite
 * counts, so a loaded machine makes the test slower, never wrong. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../catalog/catalog_open.h"
#include "../catalog/catalog_sql.h"
#include "../catalog/sqlite_check.h"
#include "../catalog/sqlite_time_limit.h"
#include "check.h"

#define ENDLESS "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"

/* Runs the endless query on db: it must stop with SQLITE_INTERRUPT and a message naming the limit. */
static void check_endless_stops(sqlite3 *db, const char *what) {
    const int rc = sqlite3_exec(db, ENDLESS, NULL, NULL, NULL);
    CHECK_MSG(rc == SQLITE_INTERRUPT, "%s: rc %d", what, rc);
    char why[512];
    andrea_sqlite_why(db, rc, why, sizeof why);
    CHECK_MSG(strstr(why, "stopped after 0.3 s") && !strchr(why, '\n'), "%s: %s", what, why);
}

/* Five rows, each some 20000 steps of SQLite apart, with 0.2 s of the reader's own work after each:
 * 1 s in all, over the 0.3 s limit, but nearly all of it is the reader's. */
static void check_reader_time_is_not_counted(sqlite3 *db) {
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_prepare_v2(db,
                             "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) "
                             "SELECT x FROM c WHERE x % 20000 = 0",
                             -1, &st, NULL) == SQLITE_OK);
    int rc, rows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rows++;
        usleep(200000);
    }
    CHECK_MSG(rc == SQLITE_DONE && rows == 5, "rc %d after %d rows", rc, rows);
    sqlite3_finalize(st);
}

int main(void) {
    char dir[] = "/tmp/andrea-time-limit-XXXXXX", path[64];
    if (!mkdtemp(dir)) return check_skip("mkdtemp failed");
    snprintf(path, sizeof path, "%s/c.db", dir);
    ae_error err = {{0}};
    andrea_sqlite_time_limit_set_default(0.3);

    sqlite3 *db = NULL;
    CHECK_MSG(andrea_catalog_open_rw(path, &db, &err) == 0, "%s", err.msg); /* makes a new catalog */
    if (db) {
        check_endless_stops(db, "writer");
        sqlite3_close(db);
    }
    db = NULL;
    CHECK_MSG(andrea_catalog_open_ro(path, &db, &err) == 0, "%s", err.msg);
    if (db) {
        check_endless_stops(db, "reader");
        /* the clock starts again at the next statement: a short one after a stopped one runs */
        CHECK(sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) == SQLITE_OK);
        check_reader_time_is_not_counted(db);
        /* a connection's own limit replaces the process's; 0 is none */
        CHECK(andrea_sqlite_time_limit(db, 0) == SQLITE_OK);
        CHECK(sqlite3_exec(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) "
                               "SELECT count(*) FROM c", NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close(db);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return check_summary("test_catalog_connections_stop_endless_queries");
}
