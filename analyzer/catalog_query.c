/* catalog_query.c — reading the head catalog: `heads` (bound filters) and `sql` (one read-only
 * statement), plus table / CSV / JSON output of a result set (see catalog.h). */
#include "catalog.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "../common/checked_size.h"
#include "catalog_sql.h"

void catalog_rows_free(catalog_rows *r) {
    if (r->col_names)
        for (int i = 0; i < r->n_cols; i++) free(r->col_names[i]);
    if (r->cells)
        for (size_t i = 0; i < (size_t)r->n_rows * (size_t)r->n_cols; i++) free(r->cells[i]);
    free(r->col_names);
    free(r->cells);
    free(r->numeric);
    memset(r, 0, sizeof *r);
}

int catalog_format_parse(const char *s) {
    if (!strcmp(s, "table")) return CATALOG_TABLE;
    if (!strcmp(s, "csv")) return CATALOG_CSV;
    if (!strcmp(s, "json")) return CATALOG_JSON;
    return -1;
}

/* Opens an existing catalog read-only. SQLite would happily create a missing file in other
 * modes; here a missing file is the user's mistake and must say so. */
static int open_ro(const char *path, sqlite3 **out, ae_error *err) {
    struct stat sb;
    *out = NULL;
    if (stat(path, &sb) != 0) return ae_fail(err, "%s: no such catalog", path);
    if (!S_ISREG(sb.st_mode)) return ae_fail(err, "%s: not a regular file", path);
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    if (rc != SQLITE_OK) {
        ae_fail(err, "%s: cannot open catalog: %s", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return -1;
    }
    SQL_CHECK(path, db, sqlite3_busy_timeout(db, 30000), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_exec(db, "PRAGMA query_only=ON", NULL, NULL, NULL), SQLITE_OK);
    *out = db;
    return 0;
fail:
    sqlite3_close(db);
    return -1;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* SQLite calls this every few thousand virtual-machine steps; non-zero interrupts the query. */
static int past_deadline(void *deadline) {
    return now_s() > *(const double *)deadline;
}

/* Steps a prepared statement to the end, collecting every row as text, at most max_bytes of it. */
static int collect_rows(sqlite3 *db, const char *path, sqlite3_stmt *st, double timeout, size_t max_bytes,
                        catalog_rows *out, ae_error *err) {
    memset(out, 0, sizeof *out);
    size_t bytes = 0;
    int nc = sqlite3_column_count(st);
    out->n_cols = nc;
    out->col_names = calloc(nc ? (size_t)nc : 1, sizeof(char *));
    if (!out->col_names) return ae_fail(err, "%s: out of memory", path);
    for (int i = 0; i < nc; i++) {
        out->col_names[i] = strdup(sqlite3_column_name(st, i));
        if (!out->col_names[i]) return ae_fail(err, "%s: out of memory", path);
    }
    size_t cap = 0;
    for (;;) {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) break;
        if (rc == SQLITE_INTERRUPT && timeout > 0)
            return ae_fail(err, "%s: query stopped after %g s (the time limit; narrow the query, add LIMIT, or raise "
                                "--timeout)", path, timeout);
        if (rc != SQLITE_ROW) return ae_fail(err, "%s: query failed: %s", path, sqlite3_errmsg(db));
        if ((size_t)out->n_rows == cap) {
            size_t ncap = cap ? cap * 2 : 64, cells;
            if (ae_mul(ncap, (size_t)(nc ? nc : 1), &cells) || cells > ((size_t)1 << 40) / sizeof(char *))
                return ae_fail(err, "%s: result too large", path);
            char **c = realloc(out->cells, cells * sizeof(char *));
            if (!c) return ae_fail(err, "%s: out of memory", path);
            out->cells = c;
            unsigned char *n = realloc(out->numeric, cells);
            if (!n) return ae_fail(err, "%s: out of memory", path);
            out->numeric = n;
            cap = ncap;
        }
        size_t base = (size_t)out->n_rows * (size_t)nc;
        for (int i = 0; i < nc; i++) {
            int t = sqlite3_column_type(st, i);
            out->numeric[base + i] = t == SQLITE_INTEGER || t == SQLITE_FLOAT;
            if (t == SQLITE_NULL) {
                out->cells[base + i] = NULL;
            } else if (t == SQLITE_FLOAT) {
                char buf[64];
                snprintf(buf, sizeof buf, "%.6g", sqlite3_column_double(st, i));
                out->cells[base + i] = strdup(buf);
            } else {
                const unsigned char *s = sqlite3_column_text(st, i);
                out->cells[base + i] = strdup(s ? (const char *)s : "");
            }
            /* what the cell costs in memory: its pointer and numeric flag, and its text as malloc
             * holds it (an 8-byte header, 16-byte granules), so a million tiny cells count too */
            const size_t cell = sizeof(char *) + 1 + (out->cells[base + i] ? (strlen(out->cells[base + i]) + 1 + 8 + 15) & ~(size_t)15 : 0);
            if ((t != SQLITE_NULL && !out->cells[base + i]) || (bytes += cell) > max_bytes) {
                for (int j = i + 1; j < nc; j++) out->cells[base + j] = NULL;
                out->n_rows++;
                if (bytes > max_bytes)
                    return ae_fail(err, "%s: result too large (over %zu MiB in memory; narrow the query or add LIMIT)",
                                   path, max_bytes >> 20);
                return ae_fail(err, "%s: out of memory", path);
            }
        }
        out->n_rows++;
    }
    return 0;
}

/* collect_rows under the limits: the deadline lives only for this call. */
static int collect(sqlite3 *db, const char *path, sqlite3_stmt *st, const catalog_limits *lim, catalog_rows *out,
                   ae_error *err) {
    const double timeout = lim && lim->timeout_s > 0 ? lim->timeout_s : 0;
    const size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : CATALOG_RESULT_MAX_BYTES;
    double deadline = now_s() + timeout;
    if (timeout > 0) sqlite3_progress_handler(db, 10000, past_deadline, &deadline);
    int rc = collect_rows(db, path, st, timeout, max_bytes, out, err);
    sqlite3_progress_handler(db, 0, NULL, NULL);
    return rc;
}

int catalog_heads(const char *path, const catalog_heads_filter *f, const catalog_limits *lim, catalog_rows *out,
                  ae_error *err) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int ret = -1;
    memset(out, 0, sizeof *out);
    if (open_ro(path, &db, err)) return -1;
    /* Every filter is a bound parameter; a NULL parameter disables its filter. */
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "SELECT model, step, layer, head, class, score, baseline, control,"
                                 " ablation_delta, ablation_mean, causal, dla_mean, label, checkpoint_sha256"
                                 " FROM head_catalog WHERE latest"
                                 " AND (?1 IS NULL OR class = ?1)"
                                 " AND (?2 IS NULL OR layer = ?2)"
                                 " AND (?3 IS NULL OR score >= ?3)"
                                 " AND (?4 IS NULL OR model = ?4 OR model_path = ?4"
                                 "      OR substr(checkpoint_sha256, 1, length(?4)) = lower(?4))"
                                 " AND (?5 OR label = 1)"
                                 " ORDER BY step IS NULL, step, model, class, layer, head",
                                 -1, &st, NULL),
              SQLITE_OK);
    if (f->class_name) SQL_CHECK(path, db, sqlite3_bind_text(st, 1, f->class_name, -1, SQLITE_STATIC), SQLITE_OK);
    if (f->has_layer) SQL_CHECK(path, db, sqlite3_bind_int(st, 2, f->layer), SQLITE_OK);
    if (f->has_min_score) SQL_CHECK(path, db, sqlite3_bind_double(st, 3, f->min_score), SQLITE_OK);
    if (f->model) SQL_CHECK(path, db, sqlite3_bind_text(st, 4, f->model, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 5, f->all ? 1 : 0), SQLITE_OK);
    if (collect(db, path, st, lim, out, err)) goto fail;
    ret = 0;
fail:
    if (ret) catalog_rows_free(out);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return ret;
}

/* The read-only guard of `andrea sql`. The connection is already read-only with query_only on;
 * this refuses what could still reach other files or change state: ATTACH/DETACH (which could
 * create a database file), every write and schema change, and pragmas that set a value. */
static int sql_authorizer(void *ud, int action, const char *a1, const char *a2, const char *db_name,
                          const char *trigger) {
    (void)ud;
    (void)db_name;
    (void)trigger;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_FUNCTION:
        /* load_extension is off by default; refuse it by name as well. */
        return a2 && !strcasecmp(a2, "load_extension") ? SQLITE_DENY : SQLITE_OK;
    case SQLITE_PRAGMA: {
        /* Reading pragmas only: "PRAGMA x" (no argument) or the introspection pragmas whose
         * argument is a table name. "PRAGMA x = v" / "PRAGMA x(v)" on anything else is refused. */
        static const char *const lookups[] = {"table_info", "table_xinfo", "index_list", "index_info",
                                              "index_xinfo", "foreign_key_list", NULL};
        if (!a2) return SQLITE_OK;
        for (int i = 0; lookups[i]; i++)
            if (!strcasecmp(a1, lookups[i])) return SQLITE_OK;
        return SQLITE_DENY;
    }
    default:
        return SQLITE_DENY;
    }
}

int catalog_sql(const char *path, const char *sql, const catalog_limits *lim, catalog_rows *out, ae_error *err) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL, *st2 = NULL;
    int ret = -1;
    memset(out, 0, sizeof *out);
    if (open_ro(path, &db, err)) return -1;
    SQL_CHECK(path, db, sqlite3_set_authorizer(db, sql_authorizer, NULL), SQLITE_OK);
    const char *tail = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, &tail);
    if (rc == SQLITE_AUTH) {
        ae_fail(err, "%s: refused: andrea sql is read-only (no writes, ATTACH, or pragma settings)", path);
        goto fail;
    }
    if (rc != SQLITE_OK) {
        ae_fail(err, "%s: %s", path, sqlite3_errmsg(db));
        goto fail;
    }
    if (!st) {
        ae_fail(err, "%s: empty SQL statement", path);
        goto fail;
    }
    /* Whatever follows the first statement must be empty: whitespace, ';' or comments, which
     * prepare to no statement at all. */
    while (tail && *tail) {
        const char *next = NULL;
        rc = sqlite3_prepare_v2(db, tail, -1, &st2, &next);
        if (rc != SQLITE_OK || st2) {
            ae_fail(err, "%s: only one SQL statement is allowed", path);
            goto fail;
        }
        if (next == tail) break;
        tail = next;
    }
    /* Belt and braces: whatever slipped past the authorizer must not write. */
    if (!sqlite3_stmt_readonly(st)) {
        ae_fail(err, "%s: refused: the catalog is read-only here (use andrea classify to change it)", path);
        goto fail;
    }
    if (collect(db, path, st, lim, out, err)) goto fail;
    ret = 0;
fail:
    if (ret) catalog_rows_free(out);
    sqlite3_finalize(st);
    sqlite3_finalize(st2);
    sqlite3_close(db);
    return ret;
}

/* ---------- output ---------- */

static void csv_cell(FILE *out, const char *s) {
    if (!s) return;
    int quote = 0;
    for (const char *p = s; *p; p++)
        if (*p == ',' || *p == '"' || *p == '\n' || *p == '\r') quote = 1;
    if (!quote) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (const char *p = s; *p; p++) {
        if (*p == '"') fputc('"', out);
        fputc(*p, out);
    }
    fputc('"', out);
}

/* Display width of a UTF-8 string in code points (close enough for a terminal table). */
static size_t width(const char *s) {
    size_t n = 0;
    for (; s && *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

/* Control characters would break the table's lines (or the terminal): show them escaped. */
static void table_cell(FILE *out, const char *s, size_t w, int right) {
    const char *t = s ? s : "NULL";
    size_t pad = w > width(t) ? w - width(t) : 0;
    if (right)
        for (size_t i = 0; i < pad; i++) fputc(' ', out);
    for (const char *p = t; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) fputc('?', out);
        else fputc(*p, out);
    }
    if (!right)
        for (size_t i = 0; i < pad; i++) fputc(' ', out);
}

int catalog_rows_write(FILE *out, const catalog_rows *r, catalog_format fmt, ae_error *err) {
    size_t nc = (size_t)r->n_cols;
    if (fmt == CATALOG_CSV) {
        for (size_t i = 0; i < nc; i++) {
            if (i) fputc(',', out);
            csv_cell(out, r->col_names[i]);
        }
        fputs("\r\n", out);
        for (int row = 0; row < r->n_rows; row++) {
            for (size_t i = 0; i < nc; i++) {
                if (i) fputc(',', out);
                csv_cell(out, r->cells[(size_t)row * nc + i]);
            }
            fputs("\r\n", out);
        }
    } else if (fmt == CATALOG_JSON) {
        cJSON *arr = cJSON_CreateArray();
        if (!arr) return ae_fail(err, "out of memory");
        for (int row = 0; row < r->n_rows; row++) {
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(arr, o)) {
                cJSON_Delete(o);
                cJSON_Delete(arr);
                return ae_fail(err, "out of memory");
            }
            for (size_t i = 0; i < nc; i++) {
                size_t k = (size_t)row * nc + i;
                const char *c = r->cells[k];
                cJSON *v = !c ? cJSON_CreateNull()
                                  : r->numeric[k] ? cJSON_CreateNumber(strtod(c, NULL)) : cJSON_CreateString(c);
                if (!v || !cJSON_AddItemToObject(o, r->col_names[i], v)) {
                    cJSON_Delete(v);
                    cJSON_Delete(arr);
                    return ae_fail(err, "out of memory");
                }
            }
        }
        char *s = cJSON_Print(arr);
        cJSON_Delete(arr);
        if (!s) return ae_fail(err, "out of memory");
        fputs(s, out);
        fputc('\n', out);
        cJSON_free(s);
    } else {
        size_t *w = calloc(nc ? nc : 1, sizeof *w);
        unsigned char *num = calloc(nc ? nc : 1, 1);
        if (!w || !num) {
            free(w);
            free(num);
            return ae_fail(err, "out of memory");
        }
        for (size_t i = 0; i < nc; i++) {
            w[i] = width(r->col_names[i]);
            num[i] = r->n_rows > 0;
        }
        for (int row = 0; row < r->n_rows; row++)
            for (size_t i = 0; i < nc; i++) {
                size_t k = (size_t)row * nc + i;
                size_t cw = width(r->cells[k] ? r->cells[k] : "NULL");
                if (cw > w[i]) w[i] = cw;
                if (r->cells[k] && !r->numeric[k]) num[i] = 0;
            }
        for (size_t i = 0; i < nc; i++) {
            if (i) fputs("  ", out);
            table_cell(out, r->col_names[i], i + 1 < nc || num[i] ? w[i] : 0, num[i]);
        }
        fputc('\n', out);
        for (int row = 0; row < r->n_rows; row++) {
            for (size_t i = 0; i < nc; i++) {
                if (i) fputs("  ", out);
                /* no padding after a left-aligned last column: no trailing blanks */
                table_cell(out, r->cells[(size_t)row * nc + i], i + 1 < nc || num[i] ? w[i] : 0, num[i]);
            }
            fputc('\n', out);
        }
        free(w);
        free(num);
    }
    if (ferror(out)) return ae_fail(err, "write error on output");
    return 0;
}
