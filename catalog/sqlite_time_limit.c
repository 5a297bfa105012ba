/* sqlite_time_limit.c — stops a statement that runs too long inside SQLite (see
 * sqlite_time_limit.h).
 *
 * How: SQLite calls a progress handler every PROGRESS_OPS virtual-machine steps; the handler adds
 * the time since its last call (at most GAP_MAX_S: a longer gap was a lock wait or the process
 * not running) and interrupts the statement once the sum passes the limit. A trace callback
 * marks where the time is not SQLite's: after a row is returned and after a statement ends, the
 * gap up to the next progress call is the reader's, and is not counted. SQLite may call the
 * handler once more in the step that returns the row, after the row's trace (vdbe.c: at
 * vdbe_return); that call is told apart by the statement's VM_STEP counter, which SQLite adds to
 * only after it, so the clock starts again at the first call of the next step. The sum starts again
 * when a statement begins while no other statement of the connection is open, so interleaved
 * statements (a loop over one query running another per row) share one budget. The state lives
 * in the user data of an SQL function, "andrea_time_limit()" (the limit in seconds), whose
 * destructor frees it when the connection closes: SQLite 3.40 has no other per-connection data
 * with a destructor. */
#include "sqlite_time_limit.h"

#include <stdlib.h>
#include <time.h>

#define PROGRESS_OPS 10000 /* about a millisecond of SQLite's work */
#define GAP_MAX_S 1.0

typedef struct {
    sqlite3 *db;
    double limit_s;
    double used_s; /* inside SQLite, since the outermost statement began */
    double last;   /* the last progress call (monotonic seconds); < 0: the time since is not SQLite's */
    sqlite3_stmt *row_stmt; /* the statement that returned the last row, until its next step runs */
    int row_steps;          /* its VM_STEP counter then */
} time_limit;

static double default_s = ANDREA_SQLITE_TIME_LIMIT_DEFAULT_S;
static double stopped_s;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 1 when st is still a prepared statement of db (a pointer kept across calls may be finalized). */
static int still_prepared(sqlite3 *db, sqlite3_stmt *st) {
    for (sqlite3_stmt *s = sqlite3_next_stmt(db, NULL); s; s = sqlite3_next_stmt(db, s))
        if (s == st) return 1;
    return 0;
}

static int on_progress(void *p) {
    time_limit *t = p;
    if (t->row_stmt) {
        if (still_prepared(t->db, t->row_stmt) &&
            sqlite3_stmt_status(t->row_stmt, SQLITE_STMTSTATUS_VM_STEP, 0) == t->row_steps)
            return 0; /* still the step that returned the row: the reader's time has not begun */
        t->row_stmt = NULL;
    }
    const double now = now_s();
    if (t->last >= 0) t->used_s += now - t->last < GAP_MAX_S ? now - t->last : GAP_MAX_S;
    t->last = now;
    if (t->used_s <= t->limit_s) return 0;
    stopped_s = t->limit_s;
    return 1; /* SQLITE_INTERRUPT */
}

/* 1 when a statement of db other than self is open (stepped and not yet reset or finished). */
static int another_open(sqlite3 *db, sqlite3_stmt *self) {
    for (sqlite3_stmt *s = sqlite3_next_stmt(db, NULL); s; s = sqlite3_next_stmt(db, s))
        if (s != self && sqlite3_stmt_busy(s)) return 1;
    return 0;
}

static int on_trace(unsigned type, void *p, void *stmt, void *x) {
    time_limit *t = p;
    (void)x;
    t->row_stmt = NULL;
    if (type == SQLITE_TRACE_STMT) {
        if (!another_open(t->db, stmt)) t->used_s = 0;
        t->last = now_s();
        return 0;
    }
    t->last = -1; /* SQLITE_TRACE_ROW, SQLITE_TRACE_PROFILE: control goes back to the reader */
    if (type == SQLITE_TRACE_ROW) {
        t->row_stmt = stmt;
        t->row_steps = sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_VM_STEP, 0);
    }
    return 0;
}

static void sql_limit(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc, (void)argv;
    sqlite3_result_double(ctx, ((time_limit *)sqlite3_user_data(ctx))->limit_s);
}

int andrea_sqlite_time_limit(sqlite3 *db, double seconds) {
    time_limit *t = calloc(1, sizeof *t);
    if (!t) return SQLITE_NOMEM;
    t->db = db;
    t->limit_s = seconds > 0 ? seconds : 0;
    t->last = -1;
    /* replaces (and frees) an earlier limit's state; frees t itself when it fails */
    const int rc = sqlite3_create_function_v2(db, "andrea_time_limit", 0, SQLITE_UTF8, t, sql_limit, NULL, NULL, free);
    if (rc != SQLITE_OK) return rc; /* the earlier limit, if any, stays */
    if (t->limit_s == 0) {
        sqlite3_progress_handler(db, 0, NULL, NULL);
        return sqlite3_trace_v2(db, 0, NULL, NULL);
    }
    sqlite3_progress_handler(db, PROGRESS_OPS, on_progress, t);
    return sqlite3_trace_v2(db, SQLITE_TRACE_STMT | SQLITE_TRACE_ROW | SQLITE_TRACE_PROFILE, on_trace, t);
}

void andrea_sqlite_time_limit_set_default(double seconds) { default_s = seconds > 0 ? seconds : 0; }
double andrea_sqlite_time_limit_default(void) { return default_s; }
double andrea_sqlite_time_limit_stopped(void) { return stopped_s; }
