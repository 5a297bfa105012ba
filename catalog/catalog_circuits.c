/* catalog_circuits.c — circuit scores in the catalog: schema, writer, head links, rows (see
 * catalog_circuits.h, docs/catalog.md). */
#include "catalog_circuits.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/buf.h"
#include "catalog_open.h"
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
    /* One row per (src, dst) pair with its three kinds: a row per kind (the first layout, still
     * migrated below) made storing GPT-2-XL's scores (2.1M rows) take 16 s; no index by
     * destination either: kept up row by row it made that 43 s (random inserts,
     * bench/bench_catalog_circuits.c). The report reads a run's rows once instead
     * (andrea_circuit_reader). Catalogs written with that index lose it here.
     * Scores in millionths (integers): 3 bytes each on disk where a REAL takes 8, GPT-2-XL's
     * 705,000 pairs 32 -> 20 MB; a score lies in [0, 1] and is read to 3 digits, and its fp32
     * rounding is ~1e-5 (tests/test_circuits_numpy.py), so 5e-7 loses nothing. The views divide. */
    "CREATE TABLE IF NOT EXISTS circuit_composition(\n"
    "  run_id INTEGER NOT NULL REFERENCES circuit_runs(id) ON DELETE CASCADE,\n"
    "  src_layer INTEGER NOT NULL, src_head INTEGER NOT NULL,\n"
    "  dst_layer INTEGER NOT NULL, dst_head INTEGER NOT NULL,\n"
    "  q_micro INTEGER, k_micro INTEGER, v_micro INTEGER,\n"
    "  PRIMARY KEY(run_id, src_layer, src_head, dst_layer, dst_head)) WITHOUT ROWID;\n"
    "DROP INDEX IF EXISTS circuit_composition_dst;\n"
    "DROP INDEX IF EXISTS circuit_composition_dst_score;\n"
    "CREATE TABLE IF NOT EXISTS circuit_heads(\n"
    "  run_id INTEGER NOT NULL REFERENCES circuit_runs(id) ON DELETE CASCADE,\n"
    "  layer INTEGER NOT NULL, head INTEGER NOT NULL,\n"
    "  copying REAL, prev_pos REAL,\n"
    "  PRIMARY KEY(run_id, layer, head)) WITHOUT ROWID;\n"
    "CREATE VIEW IF NOT EXISTS head_composition AS\n"
    "  SELECT r.model AS model, r.checkpoint_sha256 AS checkpoint_sha256,\n"
    "         c.src_layer AS src_layer, c.src_head AS src_head, c.dst_layer AS dst_layer, c.dst_head AS dst_head,\n"
    "         'Q' AS kind, c.q_micro / 1e6 AS score, r.baseline AS baseline\n"
    "  FROM circuit_composition c JOIN circuit_runs r ON r.id = c.run_id\n"
    "  UNION ALL\n"
    "  SELECT r.model AS model, r.checkpoint_sha256 AS checkpoint_sha256,\n"
    "         c.src_layer AS src_layer, c.src_head AS src_head, c.dst_layer AS dst_layer, c.dst_head AS dst_head,\n"
    "         'K' AS kind, c.k_micro / 1e6 AS score, r.baseline AS baseline\n"
    "  FROM circuit_composition c JOIN circuit_runs r ON r.id = c.run_id\n"
    "  UNION ALL\n"
    "  SELECT r.model AS model, r.checkpoint_sha256 AS checkpoint_sha256,\n"
    "         c.src_layer AS src_layer, c.src_head AS src_head, c.dst_layer AS dst_layer, c.dst_head AS dst_head,\n"
    "         'V' AS kind, c.v_micro / 1e6 AS score, r.baseline AS baseline\n"
    "  FROM circuit_composition c JOIN circuit_runs r ON r.id = c.run_id;\n"
    "CREATE VIEW IF NOT EXISTS head_weights AS\n"
    "  SELECT r.model AS model, r.checkpoint_sha256 AS checkpoint_sha256, h.layer AS layer, h.head AS head,\n"
    "         h.copying AS copying, h.prev_pos AS prev_pos\n"
    "  FROM circuit_heads h JOIN circuit_runs r ON r.id = h.run_id;\n";

/* Earlier layouts, rebuilt into the pair rows in millionths in the writer's transaction, as
 * catalog.c migrates schema 1: set aside (the view with it), then CIRCUITS_SCHEMA creates the new
 * table and view, then the rows are copied over. The first layout had a row per kind (kind TEXT,
 * score REAL), the second a row per pair with REAL q, k, v. */
enum { LAYOUT_CURRENT, LAYOUT_PER_KIND, LAYOUT_REAL_PAIRS };
static const char *const MIGRATE_RENAME =
    "DROP VIEW IF EXISTS head_composition;\n"
    "ALTER TABLE circuit_composition RENAME TO circuit_composition_old;\n";
static const char *const MIGRATE_COPY[] = {
    [LAYOUT_PER_KIND] = "INSERT INTO circuit_composition\n"
                        "  SELECT run_id, src_layer, src_head, dst_layer, dst_head,\n"
                        "         CAST(round(max(CASE kind WHEN 'Q' THEN score END) * 1e6) AS INTEGER),\n"
                        "         CAST(round(max(CASE kind WHEN 'K' THEN score END) * 1e6) AS INTEGER),\n"
                        "         CAST(round(max(CASE kind WHEN 'V' THEN score END) * 1e6) AS INTEGER)\n"
                        "  FROM circuit_composition_old GROUP BY run_id, src_layer, src_head, dst_layer, dst_head;\n"
                        "DROP TABLE circuit_composition_old;\n",
    [LAYOUT_REAL_PAIRS] = "INSERT INTO circuit_composition\n"
                          "  SELECT run_id, src_layer, src_head, dst_layer, dst_head, CAST(round(q * 1e6) AS INTEGER),\n"
                          "         CAST(round(k * 1e6) AS INTEGER), CAST(round(v * 1e6) AS INTEGER)\n"
                          "  FROM circuit_composition_old;\n"
                          "DROP TABLE circuit_composition_old;\n",
};

/* *layout: which of the layouts circuit_composition has (LAYOUT_CURRENT also when there is no
 * table yet). */
static int composition_layout(sqlite3 *db, const char *path, int *layout, ae_error *err) {
    sqlite3_stmt *st = NULL;
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db, "SELECT count(*) FILTER (WHERE name = 'kind'), count(*) FILTER (WHERE name = 'q')"
                                     " FROM pragma_table_info('circuit_composition')",
                                 -1, &st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
    *layout = sqlite3_column_int(st, 0) > 0 ? LAYOUT_PER_KIND : sqlite3_column_int(st, 1) > 0 ? LAYOUT_REAL_PAIRS : LAYOUT_CURRENT;
    sqlite3_finalize(st);
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

int andrea_catalog_circuits_schema(sqlite3 *db, const char *path, ae_error *err) {
    int layout;
    if (composition_layout(db, path, &layout, err)) return -1;
    if (layout != LAYOUT_CURRENT) SQL_CHECK(path, db, sqlite3_exec(db, MIGRATE_RENAME, NULL, NULL, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_exec(db, CIRCUITS_SCHEMA, NULL, NULL, NULL), SQLITE_OK);
    if (layout != LAYOUT_CURRENT) SQL_CHECK(path, db, sqlite3_exec(db, MIGRATE_COPY[layout], NULL, NULL, NULL), SQLITE_OK);
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
    /* the model's name as the models table knows it (a checkpoint keeps the name it was first
     * catalogued with, docs/catalog.md), else its file name (no run of it yet); every writer made
     * the whole schema first (andrea_catalog_prepare), so the table is there */
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, "SELECT name FROM models WHERE sha256 = ?1", -1, &st, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC), SQLITE_OK);
    const int found = sqlite3_step(st);
    if (found == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(name, sizeof name, "%s", (const char *)sqlite3_column_text(st, 0));
    else if (found != SQLITE_ROW)
        SQL_CHECK(path, db, found, SQLITE_DONE);
    sqlite3_finalize(st);
    st = NULL;
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

/* A score in millionths, rounded (NULL when it is not finite, or too large for an integer). */
static int bind_micro_or_null(sqlite3_stmt *st, int i, double v) {
    const double m = v * 1e6;
    return isfinite(m) && fabs(m) < 9e18 ? sqlite3_bind_int64(st, i, (sqlite3_int64)llround(m)) : sqlite3_bind_null(st, i);
}

static int insert_scores(sqlite3 *db, const char *path, const andrea_circuits *c, sqlite3_int64 run, ae_error *err) {
    sqlite3_stmt *cs = NULL, *hs = NULL;
    const int H = c->n_head, NH = c->n_layer * H;
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "INSERT INTO circuit_composition(run_id, src_layer, src_head, dst_layer, dst_head,"
                                 " q_micro, k_micro, v_micro) VALUES(?,?,?,?,?,?,?,?)",
                                 -1, &cs, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db, "INSERT INTO circuit_heads(run_id, layer, head, copying, prev_pos) VALUES(?,?,?,?,?)",
                                 -1, &hs, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int64(cs, 1, run), SQLITE_OK);
    for (int s = 0; s < NH; s++) /* in key order: every row is appended */
        for (int d = (s / H + 1) * H; d < NH; d++) {
            SQL_CHECK(path, db, sqlite3_reset(cs), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_int(cs, 2, s / H), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_int(cs, 3, s % H), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_int(cs, 4, d / H), SQLITE_OK);
            SQL_CHECK(path, db, sqlite3_bind_int(cs, 5, d % H), SQLITE_OK);
            SQL_CHECK(path, db, bind_micro_or_null(cs, 6, andrea_circuits_score(c, CIRCUIT_Q, s, d)), SQLITE_OK);
            SQL_CHECK(path, db, bind_micro_or_null(cs, 7, andrea_circuits_score(c, CIRCUIT_K, s, d)), SQLITE_OK);
            SQL_CHECK(path, db, bind_micro_or_null(cs, 8, andrea_circuits_score(c, CIRCUIT_V, s, d)), SQLITE_OK);
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

/* Opens the catalog for a circuit write and takes the write lock. */
static int open_for_circuits(const char *path, sqlite3 **out, ae_error *err) {
    sqlite3 *db = NULL;
    if (andrea_catalog_open_rw(path, &db, err)) return -1;
    /* the run's pages stay in memory until the commit: with SQLite's default 2 MB cache, GPT-2-XL's
     * 2.1M rows (55 MB) were spilled to the WAL and read back while they were written */
    SQL_CHECK(path, db, sqlite3_exec(db, "PRAGMA cache_size = -262144", NULL, NULL, NULL), SQLITE_OK);
    if (andrea_catalog_begin_immediate(db, path, err)) goto fail;
    *out = db;
    return 0;
fail:
    sqlite3_close(db);
    return -1;
}

/* Inside a transaction: one checkpoint's circuit run and scores (replacing its earlier ones). */
static int insert_circuits(sqlite3 *db, const char *path, const char *ckpt, const char *sha, const andrea_circuits *c,
                           ae_error *err) {
    sqlite3_int64 run;
    return insert_run(db, path, ckpt, sha, c, &run, err) || insert_scores(db, path, c, run, err) ? -1 : 0;
}

int andrea_catalog_circuits_write(const char *path, const char *ckpt, const char *sha, const andrea_circuits *c,
                           ae_error *err) {
    sqlite3 *db = NULL;
    if (open_for_circuits(path, &db, err)) return -1;
    /* the whole schema, as every writer makes it: a catalog `circuits --db` started is one heads and
     * analyze read and write like any other */
    if (andrea_catalog_prepare(db, path, err) || insert_circuits(db, path, ckpt, sha, c, err)) {
        andrea_catalog_rollback_close(db);
        return -1;
    }
    return andrea_catalog_commit_close(db, path, err);
}

int andrea_catalog_write_all(const char *path, andrea_catalog_entry *e, int n, ae_error *err) {
    sqlite3 *db = NULL;
    if (open_for_circuits(path, &db, err)) return -1;
    int bad = andrea_catalog_prepare(db, path, err); /* the whole schema, the circuit tables with it */
    for (int i = 0; i < n && !bad; i++) {
        e[i].run_id = 0;
        e[i].note[0] = 0;
        if (e[i].analysis)
            bad = andrea_catalog_insert_run(db, path, e[i].analysis, &e[i].run_id, e[i].note, sizeof e[i].note, err);
        if (!bad && e[i].circuits) bad = insert_circuits(db, path, e[i].ckpt_path, e[i].sha256, e[i].circuits, err);
    }
    if (bad) {
        andrea_catalog_rollback_close(db);
        return -1;
    }
    return andrea_catalog_commit_close(db, path, err);
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

/* By score, highest first; the pairs without a score (NaN: a norm is 0) last. */
static int by_score_desc(const void *a, const void *b) {
    const comp_entry *x = a, *y = b;
    const int nx = isnan(x->score), ny = isnan(y->score);
    if (nx != ny) return nx - ny;
    if (!nx && x->score != y->score) return x->score < y->score ? 1 : -1;
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
                if (s / H < d / H) e[n++] = (comp_entry){k, s, d, isnan(v) ? NAN : v}; /* every pair, as stored */
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

/* Every head's CIRCUIT_READER_TOP strongest sources and destinations, from one scan of the run's
 * rows in key order: a query per head page needs an index by destination, which made the write
 * slow (the schema above), and one scan of GPT-2-XL's 2.1M rows takes well under a second. */
struct andrea_circuit_reader {
    int n_layer, n_head;
    double baseline;
    circuit_link *top[2]; /* [0]: destinations of each head, [1]: its sources; [NH][CIRCUIT_READER_TOP] */
    int *n_top[2];        /* [NH] */
};

/* Link a ranks before b: score descending, then the other head's layer, head, kind ascending (the
 * order `ORDER BY score DESC, layer, head, kind` gives). */
static int link_before(const circuit_link *a, const circuit_link *b) {
    if (a->score != b->score) return a->score > b->score;
    if (a->layer != b->layer) return a->layer < b->layer;
    if (a->head != b->head) return a->head < b->head;
    return a->kind < b->kind;
}

/* Inserts x into the sorted top list v of *n (at most CIRCUIT_READER_TOP) entries. */
static void top_insert(circuit_link *v, int *n, circuit_link x) {
    int i = *n < CIRCUIT_READER_TOP ? (*n)++ : CIRCUIT_READER_TOP;
    if (i == CIRCUIT_READER_TOP && !link_before(&x, &v[i - 1])) return;
    if (i == CIRCUIT_READER_TOP) i--;
    while (i > 0 && link_before(&x, &v[i - 1])) {
        v[i] = v[i - 1];
        i--;
    }
    v[i] = x;
}

/* The run of sha: its id, shape and baseline (*run = -1: the catalog has no circuit run for it). */
static int find_run(sqlite3 *db, const char *path, const char *sha, sqlite3_int64 *run, andrea_circuit_reader *r,
                    ae_error *err) {
    sqlite3_stmt *st = NULL;
    *run = -1;
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE name = 'circuit_runs'", -1, &st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_ROW);
    const int have = sqlite3_column_int(st, 0); /* a catalog made before circuits has no table */
    sqlite3_finalize(st);
    st = NULL;
    if (!have) return 0;
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db, "SELECT id, n_layer, n_head, baseline FROM circuit_runs WHERE checkpoint_sha256 = ?1",
                                 -1, &st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC), SQLITE_OK);
    const int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *run = sqlite3_column_int64(st, 0);
        const sqlite3_int64 L = sqlite3_column_int64(st, 1), H = sqlite3_column_int64(st, 2);
        if (L < 1 || H < 1 || L > 4096 || H > 4096 || L * H > (1 << 20)) {
            andrea_fail(err, "%s: circuit run of %s has an impossible shape (%lld layers x %lld heads)", path, sha,
                        (long long)L, (long long)H);
            goto fail;
        }
        r->n_layer = (int)L;
        r->n_head = (int)H;
        r->baseline = sqlite3_column_type(st, 3) != SQLITE_NULL ? sqlite3_column_double(st, 3) : NAN;
    } else SQL_CHECK(path, db, rc, SQLITE_DONE);
    sqlite3_finalize(st);
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

/* One link into the top lists of its source and destination. */
static void add_link(andrea_circuit_reader *r, int src, int dst, char kind, double score) {
    const int H = r->n_head;
    top_insert(r->top[0] + (size_t)src * CIRCUIT_READER_TOP, &r->n_top[0][src],
               (circuit_link){dst / H, dst % H, kind, score, r->baseline});
    top_insert(r->top[1] + (size_t)dst * CIRCUIT_READER_TOP, &r->n_top[1][dst],
               (circuit_link){src / H, src % H, kind, score, r->baseline});
}

/* Scans the run's rows once into the top lists: pair rows in millionths, or an earlier layout's
 * rows (a catalog not written since: its next writer migrates it): REAL pairs, or a row per kind.
 * A row naming a head outside the run's shape is a damaged catalog: refused. */
static int scan_links(sqlite3 *db, const char *path, sqlite3_int64 run, andrea_circuit_reader *r, ae_error *err) {
    sqlite3_stmt *st = NULL;
    const int L = r->n_layer, H = r->n_head;
    static const char *const select[] = {
        [LAYOUT_CURRENT] = "SELECT src_layer, src_head, dst_layer, dst_head, q_micro / 1e6, k_micro / 1e6, v_micro / 1e6"
                           " FROM circuit_composition WHERE run_id = ?1",
        [LAYOUT_PER_KIND] = "SELECT src_layer, src_head, dst_layer, dst_head, kind, score FROM circuit_composition"
                            " WHERE run_id = ?1",
        [LAYOUT_REAL_PAIRS] = "SELECT src_layer, src_head, dst_layer, dst_head, q, k, v FROM circuit_composition"
                              " WHERE run_id = ?1",
    };
    int layout;
    if (composition_layout(db, path, &layout, err)) return -1;
    const int per_kind = layout == LAYOUT_PER_KIND;
    SQL_CHECK(path, db, sqlite3_prepare_v2(db, select[layout], -1, &st, NULL), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int64(st, 1, run), SQLITE_OK);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sqlite3_int64 v[4];
        for (int i = 0; i < 4; i++) v[i] = sqlite3_column_int64(st, i);
        if (v[0] < 0 || v[0] >= L || v[1] < 0 || v[1] >= H || v[2] < 0 || v[2] >= L || v[3] < 0 || v[3] >= H) {
            andrea_fail(err, "%s: circuit_composition names a head outside the model's %d x %d", path, L, H);
            goto fail;
        }
        const int src = (int)(v[0] * H + v[1]), dst = (int)(v[2] * H + v[3]);
        if (per_kind) {
            const char *k = (const char *)sqlite3_column_text(st, 4);
            /* the head pages print the kind as it is: an empty one cut a page's circuits table */
            if (!k || !k[0] || k[1] || !strchr("KQV", k[0])) {
                andrea_fail(err, "%s: circuit_composition has a kind that is not K, Q or V", path);
                goto fail;
            }
            if (sqlite3_column_type(st, 5) != SQLITE_NULL) add_link(r, src, dst, k[0], sqlite3_column_double(st, 5));
            continue;
        }
        for (int k = 0; k < CIRCUIT_N_KINDS; k++)
            if (sqlite3_column_type(st, 4 + k) != SQLITE_NULL)
                add_link(r, src, dst, andrea_circuit_kind_names[k][0], sqlite3_column_double(st, 4 + k));
    }
    SQL_CHECK(path, db, rc, SQLITE_DONE);
    sqlite3_finalize(st);
    return 0;
fail:
    sqlite3_finalize(st);
    return -1;
}

andrea_circuit_reader *andrea_circuit_reader_open(const char *path, const char *sha, ae_error *err) {
    sqlite3 *db = NULL;
    andrea_circuit_reader *r = calloc(1, sizeof *r);
    if (!r) {
        andrea_fail(err, "%s: out of memory", path);
        return NULL;
    }
    if (andrea_catalog_open_ro(path, &db, err)) goto fail;
    SQL_CHECK(path, db, sqlite3_exec(db, "PRAGMA mmap_size = 1073741824", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_int64 run;
    if (find_run(db, path, sha, &run, r, err)) goto fail;
    if (run >= 0) {
        const size_t NH = (size_t)r->n_layer * (size_t)r->n_head;
        for (int i = 0; i < 2; i++) {
            r->top[i] = malloc(NH * CIRCUIT_READER_TOP * sizeof *r->top[i]);
            r->n_top[i] = calloc(NH, sizeof *r->n_top[i]);
            if (!r->top[i] || !r->n_top[i]) {
                andrea_fail(err, "%s: out of memory for the circuit links", path);
                goto fail;
            }
        }
        if (scan_links(db, path, run, r, err)) goto fail;
    }
    SQL_CHECK(path, db, sqlite3_close(db), SQLITE_OK);
    return r;
fail:
    sqlite3_close(db);
    andrea_circuit_reader_close(r);
    return NULL;
}

void andrea_circuit_reader_close(andrea_circuit_reader *r) {
    if (!r) return;
    for (int i = 0; i < 2; i++) {
        free(r->top[i]);
        free(r->n_top[i]);
    }
    free(r);
}

int andrea_circuit_reader_links(const andrea_circuit_reader *r, int layer, int head, int as_dst,
                                const circuit_link **out) {
    *out = NULL;
    if (!r->top[0] || layer < 0 || head < 0 || layer >= r->n_layer || head >= r->n_head) return 0;
    const size_t i = (size_t)layer * (size_t)r->n_head + (size_t)head;
    *out = r->top[as_dst ? 1 : 0] + i * CIRCUIT_READER_TOP;
    return r->n_top[as_dst ? 1 : 0][i];
}
