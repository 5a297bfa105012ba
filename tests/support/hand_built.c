/* hand_built.c — see hand_built.h. */
#include "hand_built.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_random.h"
#include "run_andrea.h"

static char scratch[] = "/tmp/andrea-hand-XXXXXX";

int andrea_test_scratch_begin(void) { return mkdtemp(scratch) ? 0 : -1; }

const char *andrea_test_scratch_path(const char *name) {
    static char buf[4][4200];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", scratch, name);
    return buf[k];
}

void andrea_test_scratch_end(void) {
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", scratch);
}

const char *andrea_test_analyze(const andrea_model *m, const char *name, const char *const *extra) {
    static char db[4216];
    char bin[64], out[64], log[64];
    snprintf(bin, sizeof bin, "%s.bin", name);
    snprintf(out, sizeof out, "%s-out", name);
    snprintf(log, sizeof log, "%s.log", name);
    char bin_path[4200], out_dir[4200], log_path[4200];
    snprintf(bin_path, sizeof bin_path, "%s", andrea_test_scratch_path(bin));
    snprintf(out_dir, sizeof out_dir, "%s", andrea_test_scratch_path(out));
    snprintf(log_path, sizeof log_path, "%s", andrea_test_scratch_path(log));
    ae_error err = {{0}};
    if (andrea_model_save_bin(m, bin_path, 3, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return NULL;
    }
    const char *args[22] = {"analyze", bin_path, "--out", out_dir, "--quiet", "--report-maps", "0"};
    int n = 7;
    for (int i = 0; extra && extra[i] && n < 21; i++) args[n++] = extra[i];
    args[n] = NULL;
    if (andrea_test_run_andrea(args, log_path) != 0) {
        fprintf(stderr, "analyze of %s failed (see %s.err)\n", name, log_path);
        return NULL;
    }
    snprintf(db, sizeof db, "%s/catalog.db", out_dir);
    return db;
}

/* The rows of a one-statement query with text binding 1 = cls (and ints 2, 3 when >= 0). */
static sqlite3_stmt *query(sqlite3 **db, const char *path, const char *sql, const char *cls, int a, int b) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(*db, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_bind_text(st, 1, cls, -1, SQLITE_STATIC) ||
        (a >= 0 && (sqlite3_bind_int(st, 2, a) || sqlite3_bind_int(st, 3, b)))) {
        fprintf(stderr, "%s: %s\n", path, sqlite3_errmsg(*db));
        sqlite3_finalize(st);
        return NULL;
    }
    return st;
}

int andrea_test_labels_of(const char *db_path, const char *cls, char *out, size_t cap) {
    sqlite3 *db = NULL;
    out[0] = 0;
    sqlite3_stmt *st = query(&db, db_path, "SELECT layer, head FROM labels WHERE class = ?1 ORDER BY layer, head", cls, -1, -1);
    int rc = st ? 0 : -1, step;
    while (st && (step = sqlite3_step(st)) == SQLITE_ROW) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%d.%d", n ? " " : "", sqlite3_column_int(st, 0), sqlite3_column_int(st, 1));
    }
    if (st && step != SQLITE_DONE) rc = -1;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

double andrea_test_extra_of(const char *db_path, const char *cls, int layer, int head) {
    sqlite3 *db = NULL;
    double v = NAN;
    sqlite3_stmt *st = query(&db, db_path, "SELECT extra_value FROM head_scores WHERE class = ?1 AND layer = ?2 AND head = ?3",
                             cls, layer, head);
    if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}
