/* catalog_circuits.c — circuit scores in the catalog: schema, writer, head links, rows (see
 * catalog_circuits.h, docs/catalog.md). */
#include "catalog_circuits.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/buf.h"
#include "catalog_sql.h"

static const char *const CIRCUITS_SCHEMA =
    "CREATE TABLE IF NOT EXISTS circuit_runs(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  checkpoint_sha256 TEXT NOT NULL UNIQUE,\n"
    "  model TEXT NOT NULL, path TEXT NOT NULL,\n"
    "  n_layer INTEGER NOT NULL, n_head INTEGER NOT NULL, d_model INTEGER NOT NULL, head_dim INTEGER NOT NULL,\n"
    "  time TEXT NOT NULL, andrea_version TEXT NOT NULL,\n"
    "  baseline REAL, baseline_samples INTEGER NOT NULL, baseline_seed INTEGER NOT NULL,\n"
    "  pos_window INTEGER NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS circuit_composition(\n"
    "  run_id INTEGER NOT NULL REFERENCES circuit_runs(id) ON DELETE CASCADE,\n"
    "  src_layer INTEGER NOT NULL, src_head INTEGER NOT NULL,\n"
    "  dst_layer INTEGER NOT NULL, dst_head INTEGER NOT NULL,\n"
    "  kind TEXT NOT NULL CHECK(kind IN ('K', 'Q', 'V')),\n"
    "  score REAL,\n"
    "  PRIMARY KEY(run_id, src_layer, src_head, dst_layer, dst_head, kind)) WITHOUT ROWID;\n"
    /* covering (score in the index): a head page's sources are read from the index alone; the
     * first index (without score) cost a table lookup per row, ~1M page reads for 384 heads */
    "DROP INDEX IF EXISTS circuit_composition_dst;\n"
    "CREATE INDEX IF NOT EXISTS circuit_composition_dst_score ON circuit_composition(run_id, dst_layer, dst_head, score);\n"
    "CREATE TABLE IF NOT EXISTS circuit_heads(\n"
    "  run_id INTEGER NOT NULL REFERENCES circuit_runs(id) ON DELETE CASCADE,\n"
    "  layer INTEGER NOT NULL, head INTEGER NOT NULL,\n"
    "  copying REAL, prev_pos REAL,\n"
    "  PRIMARY KEY(run_id, layer, head)) WITHOUT ROWID;\n"
    "CREATE VIEW IF NOT EXISTS head_composition AS\n"
    "  SELECT r.model AS model, r.checkpoint_sha256 AS checkpoint_sha256,\n"
    "         c.src_layer AS src_layer, c.src_head AS src_head, c.dst_layer AS dst_layer, c.dst_head AS dst_head,\n"
    "         c.kind AS kind, c.score AS score, r.baseline AS baseline\n"
    "  FROM circuit_composition c JOIN circuit_runs r ON r.id = c.run_id;\n"
    "CREATE VIEW IF NOT EXISTS head_weights AS\n"
    "  SELECT r.model AS model, r.checkpoint_sha256 AS checkpoint_sha256, h.layer AS layer, h.head AS head,\n"
    "         h.copying AS copying, h.prev_pos AS prev_pos\n"
    "  FROM circuit_heads h JOIN circuit_runs r ON r.id = h.run_id;\n";

int andrea_catalog_circuits_schema(sqlite3 *db, const char *path, ae_error *err) {
    SQL_CHECK(path, db, sqlite3_exec(db, CIRCUITS_SCHEMA, NULL, NULL, NULL), SQLITE_OK);
    return 0;
fail:
    return -1;
}

/* The run row and its ids: deletes the checkpoint's earlier circuit run first. */
static int insert_run(sqlite3 *db, const char *path, const char *ckpt, const char *sha, const andrea_circuits *c,
                      sqlite3_int64 *run, ae_error *err) {
    sqlite3_stmt *st = NULL;
    static const char *const del[] = {
        "DELETE FROM circuit_composition WHERE run_id IN (SELECT id FROM circuit_runs WHERE checkpoint_sha256 = ?1)",
        "DELETE FROM circuit_heads WHERE run_id IN (SELECT id FROM circuit_runs WHERE checkpoint_sha256 = ?1)",
        "DELETE FROM circuit_runs WHERE checkpoint_sha256 = ?1",
    };
    for (size_t i = 0; i < sizeof del / sizeof del[0]; i++) {
        SQL_CHECK(path, db, sqlite3_prepare_v2(db, del[i], -1, &st, NULL), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_step(st), SQLITE_DONE);
        sqlite3_finalize(st);
        st = NULL;
    }
    char name[512], when[32];
    andrea_catalog_model_name(ckpt, name, sizeof name);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "INSERT INTO circuit_runs(checkpoint_sha256, model, path, n_layer, n_head, d_model,"
                                 " head_dim, time, andrea_version, baseline, baseline_samples, baseline_seed,"
                                 " pos_window) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                                 -1, &st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 3, ckpt, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 4, c->n_layer), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 5, c->n_head), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 6, c->d_model), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 7, c->head_dim), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 8, when, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 9, ANDREA_VERSION, -1, SQLITE_STATIC), SQLITE_OK);
    SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(st, 10, c->baseline), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 11, c->baseline_samples), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int64(st, 12, (sqlite3_int64)c->baseline_seed), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 13, c->pos_window), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    *run = sqlite3_last_insert_rowid(db);
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

static int insert_scores(sqlite3 *db, const char *path, const andrea_circuits *c, sqlite3_int64 run, ae_error *err) {
    sqlite3_stmt *cs = NULL, *hs = NULL;
    const int H = c->n_head, NH = c->n_layer * H;
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "INSERT INTO circuit_composition(run_id, src_layer, src_head, dst_layer, dst_head,"
                                 " kind, score) VALUES(?,?,?,?,?,?,?)",
                                 -1, &cs, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db, "INSERT INTO circuit_heads(run_id, layer, head, copying, prev_pos) VALUES(?,?,?,?,?)",
                                 -1, &hs, NULL),
              SQLITE_OK);
    for (int s = 0; s < NH; s++)
        for (int d = (s / H + 1) * H; d < NH; d++)
            for (int k = 0; k < CIRCUIT_N_KINDS; k++) {
                SQL_CHECK(path, db, sqlite3_reset(cs), SQLITE_OK);
                SQL_CHECK(path, db, sqlite3_bind_int64(cs, 1, run), SQLITE_OK);
                SQL_CHECK(path, db, sqlite3_bind_int(cs, 2, s / H), SQLITE_OK);
                SQL_CHECK(path, db, sqlite3_bind_int(cs, 3, s % H), SQLITE_OK);
                SQL_CHECK(path, db, sqlite3_bind_int(cs, 4, d / H), SQLITE_OK);
                SQL_CHECK(path, db, sqlite3_bind_int(cs, 5, d % H), SQLITE_OK);
                SQL_CHECK(path, db, sqlite3_bind_text(cs, 6, andrea_circuit_kind_names[k], -1, SQLITE_STATIC), SQLITE_OK);
                SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(cs, 7, andrea_circuits_score(c, k, s, d)), SQLITE_OK);
                SQL_CHECK(path, db, sqlite3_step(cs), SQLITE_DONE);
            }
    for (int i = 0; i < NH; i++) {
        SQL_CHECK(path, db, sqlite3_reset(hs), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_int64(hs, 1, run), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_int(hs, 2, i / H), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_int(hs, 3, i % H), SQLITE_OK);
        SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(hs, 4, c->copying[i]), SQLITE_OK);
        SQL_CHECK(path, db, andrea_catalog_bind_real_or_null(hs, 5, c->prev_pos[i]), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_step(hs), SQLITE_DONE);
    }
    sqlite3_finalize(cs);
    sqlite3_finalize(hs);
    return 0;
fail:
    sqlite3_finalize(cs);
    sqlite3_finalize(hs);
    return -1;
}

int andrea_catalog_circuits_write(const char *path, const char *ckpt, const char *sha, const andrea_circuits *c,
                           ae_error *err) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int in_tx = 0;
    if (andrea_catalog_open_rw(path, &db, err)) return -1;
    if (andrea_catalog_begin_immediate(db, path, err)) goto fail;
    in_tx = 1;
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
    const int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    if (v > ANDREA_CATALOG_SCHEMA_VERSION) {
        andrea_fail(err, "%s: catalog schema version %d is newer than this andrea's (%d)", path, v,
                ANDREA_CATALOG_SCHEMA_VERSION);
        goto fail;
    }
    char mark[64];
    snprintf(mark, sizeof mark, "PRAGMA application_id=%d", ANDREA_CATALOG_APPLICATION_ID);
    SQL_CHECK(path, db, sqlite3_exec(db, mark, NULL, NULL, NULL), SQLITE_OK);
    if (andrea_catalog_circuits_schema(db, path, err)) goto fail;
    sqlite3_int64 run;
    if (insert_run(db, path, ckpt, sha, c, &run, err) || insert_scores(db, path, c, run, err)) goto fail;
    SQL_CHECK(path, db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    in_tx = 0;
    SQL_CHECK(path, db, sqlite3_close(db), SQLITE_OK);
    return 0;
fail:
    sqlite3_finalize(st);
    if (in_tx) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    return -1;
}

int andrea_catalog_circuits_compute_and_write(const char *db_path, const andrea_model *m, andrea_device device,
                                       const char *ckpt, const char *sha, ae_error *err) {
    andrea_circuits c;
    if (andrea_circuits_compute_on(m, device, &c, err)) return -1;
    int rc = andrea_catalog_circuits_write(db_path, ckpt, sha, &c, err);
    andrea_circuits_free(&c);
    return rc;
}

/* ---------- rows for printing ---------- */

static int rows_alloc(catalog_rows *r, const char *const *names, int nc, int nr) {
    memset(r, 0, sizeof *r);
    r->col_names = calloc((size_t)nc, sizeof(char *));
    r->cells = calloc((size_t)nc * (nr ? nr : 1), sizeof(char *));
    r->numeric = calloc((size_t)nc * (nr ? nr : 1), 1);
    if (!r->col_names || !r->cells || !r->numeric) return -1;
    r->n_cols = nc;
    r->n_rows = nr;
    for (int i = 0; i < nc; i++)
        if (!(r->col_names[i] = strdup(names[i]))) return -1;
    return 0;
}

/* cell (row, col) = v as %.6g (NULL when not finite) or text */
static int cell(catalog_rows *r, int row, int col, double v, const char *text) {
    const size_t k = (size_t)row * r->n_cols + col;
    char buf[64];
    if (!text && !isfinite(v)) return 0;
    if (!text) snprintf(buf, sizeof buf, v == (int)v ? "%.0f" : "%.6g", v);
    r->numeric[k] = !text;
    return (r->cells[k] = strdup(text ? text : buf)) ? 0 : -1;
}

typedef struct {
    int kind, src, dst;
    double score;
} comp_entry;

static int by_score_desc(const void *a, const void *b) {
    const comp_entry *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    if (x->dst != y->dst) return x->dst - y->dst;
    if (x->src != y->src) return x->src - y->src;
    return x->kind - y->kind;
}

int andrea_circuits_rows(const andrea_circuits *c, int weights, int top, catalog_rows *out, ae_error *err) {
    const int H = c->n_head, NH = c->n_layer * H;
    if (weights) {
        static const char *const names[] = {"layer", "head", "copying", "prev_pos"};
        if (rows_alloc(out, names, 4, NH)) goto oom;
        for (int i = 0; i < NH; i++)
            if (cell(out, i, 0, i / H, NULL) || cell(out, i, 1, i % H, NULL) || cell(out, i, 2, c->copying[i], NULL) ||
                cell(out, i, 3, c->prev_pos[i], NULL))
                goto oom;
        return 0;
    }
    size_t n = 0;
    comp_entry *e = malloc(sizeof *e * ((size_t)3 * NH * NH + 1));
    if (!e) goto oom;
    for (int k = 0; k < CIRCUIT_N_KINDS; k++)
        for (int s = 0; s < NH; s++)
            for (int d = 0; d < NH; d++) {
                double v = andrea_circuits_score(c, k, s, d);
                if (s / H < d / H && isfinite(v)) e[n++] = (comp_entry){k, s, d, v};
            }
    qsort(e, n, sizeof *e, by_score_desc);
    if (top > 0 && (size_t)top < n) n = (size_t)top;
    static const char *const names[] = {"src_layer", "src_head", "dst_layer", "dst_head", "kind", "score", "baseline"};
    if (rows_alloc(out, names, 7, (int)n)) {
        free(e);
        goto oom;
    }
    for (size_t i = 0; i < n; i++) {
        const int r = (int)i;
        if (cell(out, r, 0, e[i].src / H, NULL) || cell(out, r, 1, e[i].src % H, NULL) ||
            cell(out, r, 2, e[i].dst / H, NULL) || cell(out, r, 3, e[i].dst % H, NULL) ||
            cell(out, r, 4, 0, andrea_circuit_kind_names[e[i].kind]) || cell(out, r, 5, e[i].score, NULL) ||
            cell(out, r, 6, c->baseline, NULL)) {
            free(e);
            goto oom;
        }
    }
    free(e);
    return 0;
oom:
    andrea_catalog_rows_free(out);
    return andrea_fail(err, "circuits: out of memory");
}

/* ---------- links for the head page ---------- */

/* One read-only connection and two prepared statements for every head page of a report: opening
 * the catalog per page cost ~15 ms (a 384-head model's pages took 5.8 s, most of it there). */
struct andrea_circuit_reader {
    sqlite3 *db;
    sqlite3_stmt *q[2]; /* [0]: destinations of a source head, [1]: sources of a destination head */
    char path[4200];
    double baseline;
};

andrea_circuit_reader *andrea_circuit_reader_open(const char *path, const char *sha, ae_error *err) {
    struct stat sb;
    sqlite3_stmt *st = NULL;
    andrea_circuit_reader *r = calloc(1, sizeof *r);
    if (!r) {
        andrea_fail(err, "%s: out of memory", path);
        return NULL;
    }
    snprintf(r->path, sizeof r->path, "%s", path);
    sqlite3 *db = NULL;
    if (stat(path, &sb) != 0) {
        andrea_fail(err, "%s: no such catalog", path);
        goto fail;
    }
    const int orc = sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY, NULL);
    db = r->db; /* closed by andrea_circuit_reader_close even when the open failed */
    SQL_CHECK(path, db, orc, SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_busy_timeout(db, 30000), SQLITE_OK);
    /* pages read through a mapping rather than one pread each (a catalog written before the
     * covering index still reads the table once per source) */
    SQL_CHECK(path, db, sqlite3_exec(db, "PRAGMA mmap_size = 1073741824", NULL, NULL, NULL), SQLITE_OK);
    /* a catalog made before circuits has no table: a reader without links */
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE name = 'circuit_runs'", -1, &st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
    const int have = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    if (!have) return r;
    static const char *const sql[2] = {
        "SELECT c.dst_layer, c.dst_head, c.kind, c.score FROM circuit_composition c"
        " WHERE c.run_id = (SELECT id FROM circuit_runs WHERE checkpoint_sha256 = ?1)"
        " AND c.src_layer = ?2 AND c.src_head = ?3 AND c.score IS NOT NULL"
        " ORDER BY c.score DESC, c.dst_layer, c.dst_head, c.kind LIMIT ?4",
        "SELECT c.src_layer, c.src_head, c.kind, c.score FROM circuit_composition c"
        " WHERE c.run_id = (SELECT id FROM circuit_runs WHERE checkpoint_sha256 = ?1)"
        " AND c.dst_layer = ?2 AND c.dst_head = ?3 AND c.score IS NOT NULL"
        " ORDER BY c.score DESC, c.src_layer, c.src_head, c.kind LIMIT ?4"};
    for (int i = 0; i < 2; i++) {
        SQL_CHECK(path, db, sqlite3_prepare_v2(db, sql[i], -1, &r->q[i], NULL), SQLITE_OK);
        SQL_CHECK(path, db, sqlite3_bind_text(r->q[i], 1, sha, -1, SQLITE_TRANSIENT), SQLITE_OK);
    }
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, "SELECT baseline FROM circuit_runs WHERE checkpoint_sha256 = ?1", -1, &st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC), SQLITE_OK);
    const int rc = sqlite3_step(st);
    r->baseline = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL ? sqlite3_column_double(st, 0) : NAN;
    if (rc != SQLITE_ROW) SQL_CHECK(path, db, rc, SQLITE_DONE);
    sqlite3_finalize(st);
    return r;
fail:
    sqlite3_finalize(st);
    andrea_circuit_reader_close(r);
    return NULL;
}

void andrea_circuit_reader_close(andrea_circuit_reader *r) {
    if (!r) return;
    for (int i = 0; i < 2; i++) sqlite3_finalize(r->q[i]);
    sqlite3_close(r->db);
    free(r);
}

int andrea_circuit_reader_links(andrea_circuit_reader *r, int layer, int head, int as_dst, int top, circuit_link **out,
                                int *n, ae_error *err) {
    const char *path = r->path;
    sqlite3 *db = r->db;
    sqlite3_stmt *st = r->q[as_dst ? 1 : 0];
    size_t cap = top > 0 ? (size_t)top : 16;
    int ret = -1;
    *out = NULL;
    *n = 0;
    if (!st) return 0; /* no circuit scores in this catalog */
    SQL_CHECK(path, db, sqlite3_reset(st), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 2, layer), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 3, head), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 4, top > 0 ? top : -1), SQLITE_OK);
    *out = malloc(sizeof **out * cap);
    if (!*out) {
        andrea_fail(err, "%s: out of memory", path);
        goto fail;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (andrea_grow(out, &cap, (size_t)*n + 1, sizeof **out, 64)) {
            andrea_fail(err, "%s: out of memory", path);
            goto fail;
        }
        const char *k = (const char *)sqlite3_column_text(st, 2);
        (*out)[(*n)++] = (circuit_link){sqlite3_column_int(st, 0), sqlite3_column_int(st, 1), k ? k[0] : '?',
                                        sqlite3_column_double(st, 3), r->baseline};
    }
    SQL_CHECK(path, db, rc, SQLITE_DONE);
    ret = 0;
fail:
    sqlite3_reset(st);
    if (ret) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return ret;
}

int andrea_catalog_circuit_links(const char *path, const char *sha, int layer, int head, int as_dst, int top,
                                 circuit_link **out, int *n, ae_error *err) {
    *out = NULL;
    *n = 0;
    andrea_circuit_reader *r = andrea_circuit_reader_open(path, sha, err);
    if (!r) return -1;
    const int rc = andrea_circuit_reader_links(r, layer, head, as_dst, top, out, n, err);
    andrea_circuit_reader_close(r);
    return rc;
}

char *andrea_circuits_head_html(andrea_circuit_reader *r, int layer, int head) {
    enum { TOP = 5 };
    circuit_link *src = NULL, *dst = NULL;
    int ns = 0, nd = 0;
    ae_error err;
    if (!r || andrea_circuit_reader_links(r, layer, head, 1, TOP, &src, &ns, &err) ||
        andrea_circuit_reader_links(r, layer, head, 0, TOP, &dst, &nd, &err) || (ns == 0 && nd == 0)) {
        free(src);
        free(dst);
        return NULL;
    }
    andrea_buf s = {0};
    andrea_buf_printf(&s, "<h2>Circuits (from the weights)</h2>\n<p>Composition scores ||M||<sub>F</sub> / "
                          "(||A||<sub>F</sub> ||B||<sub>F</sub>); random matrices of these shapes score %.3f on "
                          "average (docs/scores.md).</p>\n",
                      ns ? src[0].baseline : dst[0].baseline);
    for (int side = 0; side < 2; side++) {
        const circuit_link *v = side ? dst : src;
        const int n = side ? nd : ns;
        andrea_buf_printf(&s, "<h3>%s</h3>\n", side ? "Top destinations (later heads reading this head's output)"
                                                    : "Top sources (earlier heads writing into this head's input)");
        if (!n) {
            andrea_buf_printf(&s, "<p>none (%s layer)</p>\n", side ? "last" : "first");
            continue;
        }
        andrea_buf_puts(&s, "<table class=\"circuits\">\n<tr><th class=\"l\">head</th><th>kind</th><th>score</th></tr>\n");
        for (int i = 0; i < n; i++)
            andrea_buf_printf(&s,
                              "<tr><td class=\"l\"><a href=\"L%d_H%d.html\">L%d H%d</a></td><td>%c</td><td>%.3f</td></tr>\n",
                              v[i].layer, v[i].head, v[i].layer, v[i].head, v[i].kind, v[i].score);
        andrea_buf_puts(&s, "</table>\n");
    }
    free(src);
    free(dst);
    if (andrea_buf_failed(&s)) andrea_buf_free(&s);
    return s.s;
}
