/* test_catalog_circuits — the circuit scores in the catalog (catalog/catalog_circuits.c):
 *   - every head's top links from the reader equal a brute-force sort of all its stored links
 *     (score descending, ties by the other head's layer, head, kind; NULL scores left out), on a
 *     model whose scores have ties and NaN;
 *   - the head_composition view gives one row per (pair, kind) with the stored score;
 *   - a catalog of the first layout (a row per kind, with its index by destination) or the second
 *     (REAL q, k, v per pair) is read as it is, and the next writer migrates it: its scores kept
 *     to the millionth, the index gone;
 *   - a score that is no multiple of 1e-6 is stored as the nearest millionth. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/catalog_circuits.h"
#include "reports/report_circuits.h"
#include "check.h"

static const char *const SHA_A = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char *const SHA_B = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/* L x H heads; scores from a few values so that ties are common; some NaN. */
static void fake(andrea_circuits *c, int L, int H, unsigned seed) {
    const size_t NH = (size_t)L * (size_t)H;
    memset(c, 0, sizeof *c);
    c->n_layer = L;
    c->n_head = H;
    c->d_model = 16;
    c->head_dim = 4;
    c->baseline = 0.25;
    c->comp = malloc(3 * NH * NH * sizeof *c->comp);
    c->copying = calloc(NH, sizeof *c->copying);
    c->prev_pos = calloc(NH, sizeof *c->prev_pos);
    for (size_t k = 0; k < 3; k++)
        for (size_t a = 0; a < NH; a++)
            for (size_t b = 0; b < NH; b++) {
                seed = seed * 1103515245u + 12345u;
                const unsigned r = (seed >> 16) % 8;
                c->comp[(k * NH + a) * NH + b] = a / (size_t)H >= b / (size_t)H || r == 7 ? NAN : 0.125 * r;
            }
}

typedef struct {
    int other; /* the other head, l * H + h */
    int kind;  /* index into "QKV" sorted as text: K < Q < V */
    double score;
} brute_link;

static int kind_rank(int k) { return k == CIRCUIT_K ? 0 : k == CIRCUIT_Q ? 1 : 2; }

static int brute_order(const void *pa, const void *pb) {
    const brute_link *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    if (a->other != b->other) return a->other < b->other ? -1 : 1;
    return kind_rank(a->kind) - kind_rank(b->kind);
}

/* The reader's links of head i equal the first CIRCUIT_READER_TOP of all its links sorted. */
static void links_match(const andrea_circuit_reader *r, const andrea_circuits *c, int i, int as_dst) {
    const int NH = c->n_layer * c->n_head, H = c->n_head;
    brute_link *all = malloc(sizeof *all * (size_t)(3 * NH));
    int n = 0;
    for (int k = 0; k < 3; k++)
        for (int o = 0; o < NH; o++) {
            const double v = as_dst ? andrea_circuits_score(c, k, o, i) : andrea_circuits_score(c, k, i, o);
            if (!isnan(v)) all[n++] = (brute_link){o, k, v};
        }
    qsort(all, (size_t)n, sizeof *all, brute_order);
    const circuit_link *got;
    const int ng = andrea_circuit_reader_links(r, i / H, i % H, as_dst, &got);
    const int want = n < CIRCUIT_READER_TOP ? n : CIRCUIT_READER_TOP;
    CHECK_MSG(ng == want, "head %d %s: %d links, want %d", i, as_dst ? "sources" : "destinations", ng, want);
    for (int j = 0; j < ng && j < want; j++)
        CHECK_MSG(got[j].layer * H + got[j].head == all[j].other && got[j].kind == andrea_circuit_kind_names[all[j].kind][0] &&
                      got[j].score == all[j].score && got[j].baseline == c->baseline,
                  "head %d %s, link %d: L%d H%d %c %g, want head %d %s %g", i, as_dst ? "sources" : "destinations", j,
                  got[j].layer, got[j].head, got[j].kind, got[j].score, all[j].other,
                  andrea_circuit_kind_names[all[j].kind], all[j].score);
    free(all);
}

static void all_links_match(const char *db, const char *sha, const andrea_circuits *c) {
    ae_error err = {{0}};
    andrea_circuit_reader *r = andrea_circuit_reader_open(db, sha, &err);
    CHECK_MSG(r != NULL, "%s", err.msg);
    if (!r) return;
    for (int i = 0; i < c->n_layer * c->n_head; i++) {
        links_match(r, c, i, 0);
        links_match(r, c, i, 1);
    }
    andrea_circuit_reader_close(r);
}

static sqlite3_int64 q1(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    sqlite3_int64 v = -1;
    if (sqlite3_open(path, &db) == SQLITE_OK && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else fprintf(stderr, "  sql failed: %s: %s\n", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void path_in_tmp(char *out, size_t cap, const char *name) {
    snprintf(out, cap, "%s/%s", check_tmpdir(), name);
    unlink(out);
}

static void test_reader_links_equal_a_brute_force_sort_with_ties_and_nulls(void) {
    char db[1024];
    path_in_tmp(db, sizeof db, "circuits_links.db");
    andrea_circuits c;
    fake(&c, 4, 3, 7);
    ae_error err = {{0}};
    CHECK_MSG(andrea_catalog_circuits_write(db, "/x/m.bin", SHA_A, &c, &err) == 0, "%s", err.msg);
    all_links_match(db, SHA_A, &c);
    /* one row per (pair, kind), NULL where the score is NaN */
    const int NH = 12, pairs = (NH * NH - 4 * 3 * 3) / 2;
    CHECK(q1(db, "SELECT count(*) FROM head_composition") == 3 * pairs);
    int nan_k = 0;
    for (int s = 0; s < NH; s++)
        for (int d = 0; d < NH; d++) nan_k += s / 3 < d / 3 && isnan(andrea_circuits_score(&c, CIRCUIT_K, s, d));
    CHECK(q1(db, "SELECT count(*) FROM head_composition WHERE kind = 'K' AND score IS NULL") == nan_k);
    static const char *const same[3] = {
        "SELECT count(*) FROM head_composition h JOIN circuit_composition c USING(src_layer, src_head, dst_layer,"
        " dst_head) WHERE h.kind = 'Q' AND h.score IS c.q_micro / 1e6",
        "SELECT count(*) FROM head_composition h JOIN circuit_composition c USING(src_layer, src_head, dst_layer,"
        " dst_head) WHERE h.kind = 'K' AND h.score IS c.k_micro / 1e6",
        "SELECT count(*) FROM head_composition h JOIN circuit_composition c USING(src_layer, src_head, dst_layer,"
        " dst_head) WHERE h.kind = 'V' AND h.score IS c.v_micro / 1e6"};
    for (int k = 0; k < 3; k++) CHECK_MSG(q1(db, same[k]) == pairs, "view kind %s", andrea_circuit_kind_names[k]);
    /* a checkpoint without circuit scores: a reader without links */
    andrea_circuit_reader *r = andrea_circuit_reader_open(db, SHA_B, &err);
    CHECK_MSG(r != NULL, "%s", err.msg);
    const circuit_link *l;
    CHECK(r && andrea_circuit_reader_links(r, 1, 1, 1, &l) == 0 && andrea_circuits_head_html(r, 1, 1) == NULL);
    andrea_circuit_reader_close(r);
    andrea_circuits_free(&c);
}

/* The first layout as andrea wrote it (one row per kind, the covering index by destination). */
static const char *const PER_KIND_SCHEMA =
    "CREATE TABLE circuit_runs(id INTEGER PRIMARY KEY, checkpoint_sha256 TEXT NOT NULL UNIQUE, model TEXT NOT NULL,"
    " path TEXT NOT NULL, n_layer INTEGER NOT NULL, n_head INTEGER NOT NULL, d_model INTEGER NOT NULL,"
    " head_dim INTEGER NOT NULL, time TEXT NOT NULL, andrea_version TEXT NOT NULL, baseline REAL,"
    " baseline_samples INTEGER NOT NULL, baseline_seed INTEGER NOT NULL, pos_window INTEGER NOT NULL);"
    "CREATE TABLE circuit_composition(run_id INTEGER NOT NULL REFERENCES circuit_runs(id) ON DELETE CASCADE,"
    " src_layer INTEGER NOT NULL, src_head INTEGER NOT NULL, dst_layer INTEGER NOT NULL, dst_head INTEGER NOT NULL,"
    " kind TEXT NOT NULL CHECK(kind IN ('K', 'Q', 'V')), score REAL,"
    " PRIMARY KEY(run_id, src_layer, src_head, dst_layer, dst_head, kind)) WITHOUT ROWID;"
    "CREATE INDEX circuit_composition_dst_score ON circuit_composition(run_id, dst_layer, dst_head, score);"
    "CREATE TABLE circuit_heads(run_id INTEGER NOT NULL REFERENCES circuit_runs(id) ON DELETE CASCADE,"
    " layer INTEGER NOT NULL, head INTEGER NOT NULL, copying REAL, prev_pos REAL,"
    " PRIMARY KEY(run_id, layer, head)) WITHOUT ROWID;"
    "CREATE VIEW head_composition AS SELECT r.model AS model, r.checkpoint_sha256 AS checkpoint_sha256,"
    " c.src_layer AS src_layer, c.src_head AS src_head, c.dst_layer AS dst_layer, c.dst_head AS dst_head,"
    " c.kind AS kind, c.score AS score, r.baseline AS baseline"
    " FROM circuit_composition c JOIN circuit_runs r ON r.id = c.run_id;"
    "CREATE VIEW head_weights AS SELECT r.model AS model, r.checkpoint_sha256 AS checkpoint_sha256, h.layer AS layer,"
    " h.head AS head, h.copying AS copying, h.prev_pos AS prev_pos FROM circuit_heads h JOIN circuit_runs r ON"
    " r.id = h.run_id;";

/* An earlier layout's catalog at path: the first layout's schema, then `change` (the second
 * layout's table and view, or NULL), c's run row; returns the open database inside a transaction
 * with `insert` prepared in *st (close_old_layout commits). */
static sqlite3 *open_old_layout(const char *path, const andrea_circuits *c, const char *change, const char *insert,
                                sqlite3_stmt **st) {
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, PER_KIND_SCHEMA, NULL, NULL, NULL) == SQLITE_OK);
    if (change) CHECK(sqlite3_exec(db, change, NULL, NULL, NULL) == SQLITE_OK);
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO circuit_runs VALUES(1, '%s', 'm', '/x/m.bin', %d, %d, 16, 4, 't', 'v', 0.25, 16, 0, 128);"
             "PRAGMA application_id=1095648338;",
             SHA_A, c->n_layer, c->n_head);
    CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(db, insert, -1, st, NULL) == SQLITE_OK);
    return db;
}

static void close_old_layout(sqlite3 *db, sqlite3_stmt *st) {
    sqlite3_finalize(st);
    CHECK(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
}

static void write_per_kind(const char *path, const andrea_circuits *c) {
    sqlite3_stmt *st = NULL;
    const int H = c->n_head, NH = c->n_layer * H;
    sqlite3 *db = open_old_layout(path, c, NULL, "INSERT INTO circuit_composition VALUES(1, ?, ?, ?, ?, ?, ?)", &st);
    for (int s = 0; s < NH; s++)
        for (int d = (s / H + 1) * H; d < NH; d++)
            for (int k = 0; k < 3; k++) {
                const double v = andrea_circuits_score(c, k, s, d);
                sqlite3_reset(st);
                sqlite3_bind_int(st, 1, s / H);
                sqlite3_bind_int(st, 2, s % H);
                sqlite3_bind_int(st, 3, d / H);
                sqlite3_bind_int(st, 4, d % H);
                sqlite3_bind_text(st, 5, andrea_circuit_kind_names[k], -1, SQLITE_STATIC);
                if (isnan(v)) sqlite3_bind_null(st, 6);
                else sqlite3_bind_double(st, 6, v);
                CHECK(sqlite3_step(st) == SQLITE_DONE);
            }
    close_old_layout(db, st);
}

/* The second layout: REAL q, k, v per pair (the first layout's other tables). */
static void write_real_pairs(const char *path, const andrea_circuits *c) {
    sqlite3_stmt *st = NULL;
    const int H = c->n_head, NH = c->n_layer * H;
    sqlite3 *db = open_old_layout(
        path, c,
        "DROP VIEW head_composition; DROP TABLE circuit_composition;"
        "CREATE TABLE circuit_composition(run_id INTEGER NOT NULL REFERENCES circuit_runs(id) ON DELETE CASCADE,"
        " src_layer INTEGER NOT NULL, src_head INTEGER NOT NULL, dst_layer INTEGER NOT NULL,"
        " dst_head INTEGER NOT NULL, q REAL, k REAL, v REAL,"
        " PRIMARY KEY(run_id, src_layer, src_head, dst_layer, dst_head)) WITHOUT ROWID;"
        "CREATE VIEW head_composition AS SELECT r.model AS model, r.checkpoint_sha256 AS checkpoint_sha256,"
        " c.src_layer AS src_layer, c.src_head AS src_head, c.dst_layer AS dst_layer, c.dst_head AS dst_head,"
        " 'Q' AS kind, c.q AS score, r.baseline AS baseline FROM circuit_composition c JOIN circuit_runs r"
        " ON r.id = c.run_id UNION ALL SELECT r.model, r.checkpoint_sha256, c.src_layer, c.src_head,"
        " c.dst_layer, c.dst_head, 'K', c.k, r.baseline FROM circuit_composition c JOIN circuit_runs r"
        " ON r.id = c.run_id UNION ALL SELECT r.model, r.checkpoint_sha256, c.src_layer, c.src_head,"
        " c.dst_layer, c.dst_head, 'V', c.v, r.baseline FROM circuit_composition c JOIN circuit_runs r"
        " ON r.id = c.run_id;",
        "INSERT INTO circuit_composition VALUES(1, ?, ?, ?, ?, ?, ?, ?)", &st);
    for (int s = 0; s < NH; s++)
        for (int d = (s / H + 1) * H; d < NH; d++) {
            sqlite3_reset(st);
            sqlite3_bind_int(st, 1, s / H);
            sqlite3_bind_int(st, 2, s % H);
            sqlite3_bind_int(st, 3, d / H);
            sqlite3_bind_int(st, 4, d % H);
            for (int k = 0; k < 3; k++) {
                const double v = andrea_circuits_score(c, k, s, d);
                if (isnan(v)) sqlite3_bind_null(st, 5 + k);
                else sqlite3_bind_double(st, 5 + k, v);
            }
            CHECK(sqlite3_step(st) == SQLITE_DONE);
        }
    close_old_layout(db, st);
}

/* A catalog of an earlier layout (written by write_old; old_column: a column only it has) is read
 * as it is, and the next writer migrates it: every row kept, the scores (multiples of 1/8, exact
 * in millionths) unchanged, no index or set-aside table left. */
static void check_migration(const char *file, void (*write_old)(const char *, const andrea_circuits *),
                            const char *old_column) {
    char db[1024], sql[256];
    path_in_tmp(db, sizeof db, file);
    andrea_circuits a, b;
    fake(&a, 3, 4, 11);
    fake(&b, 2, 2, 5);
    write_old(db, &a);
    all_links_match(db, SHA_A, &a); /* read-only: not migrated */
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('circuit_composition') WHERE name = '%s'", old_column);
    CHECK(q1(db, sql) == 1);
    const sqlite3_int64 rows = q1(db, "SELECT count(*) FROM head_composition");
    const sqlite3_int64 sum = q1(db, "SELECT CAST(sum(score) * 8 AS INTEGER) FROM head_composition");
    ae_error err = {{0}};
    CHECK_MSG(andrea_catalog_circuits_write(db, "/x/other.bin", SHA_B, &b, &err) == 0, "%s", err.msg);
    CHECK_MSG(q1(db, sql) == 0, "%s: column %s still there", file, old_column);
    CHECK(q1(db, "SELECT count(*) FROM pragma_table_info('circuit_composition') WHERE name = 'q_micro'") == 1);
    CHECK(q1(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'circuit_composition_dst%'") ==
          0);
    CHECK(q1(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'circuit_composition_%'") == 0);
    CHECK(q1(db, "SELECT count(*) FROM head_composition WHERE checkpoint_sha256 LIKE 'a%'") == rows);
    CHECK(q1(db, "SELECT CAST(sum(score) * 8 AS INTEGER) FROM head_composition WHERE checkpoint_sha256 LIKE 'a%'") ==
          sum);
    all_links_match(db, SHA_A, &a);
    all_links_match(db, SHA_B, &b);
    andrea_circuits_free(&a);
    andrea_circuits_free(&b);
}

static void test_earlier_layouts_are_read_as_they_are_and_migrated_by_the_next_writer(void) {
    check_migration("circuits_per_kind.db", write_per_kind, "kind");
    check_migration("circuits_real_pairs.db", write_real_pairs, "q");
}

static void test_a_score_is_stored_as_its_nearest_millionth(void) {
    char db[1024];
    path_in_tmp(db, sizeof db, "circuits_micro.db");
    andrea_circuits c;
    fake(&c, 2, 2, 3);
    const double want[] = {0.0412113, 0.0412117, 0.9999996, 1e-9};
    const double stored[] = {0.041211, 0.041212, 1.0, 0.0};
    for (int i = 0; i < 4; i++) c.comp[(size_t)CIRCUIT_Q * 16 + (size_t)(i % 2) * 4 + 2 + (size_t)(i / 2)] = want[i];
    ae_error err = {{0}};
    CHECK_MSG(andrea_catalog_circuits_write(db, "/x/m.bin", SHA_A, &c, &err) == 0, "%s", err.msg);
    for (int i = 0; i < 4; i++) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "SELECT score = %.17g FROM head_composition WHERE kind = 'Q' AND src_layer = 0 AND src_head = %d AND"
                 " dst_layer = 1 AND dst_head = %d",
                 stored[i], i % 2, i / 2);
        CHECK_MSG(q1(db, sql) == 1, "score %.9g: not stored as %.6f", want[i], stored[i]);
    }
    andrea_circuits_free(&c);
}

/* A damaged catalog (a row naming a head outside the run's shape): the reader refuses it. */
static void test_a_row_outside_the_shape_is_refused_by_the_reader(void) {
    char db[1024];
    path_in_tmp(db, sizeof db, "circuits_damaged.db");
    andrea_circuits c;
    fake(&c, 2, 2, 3);
    ae_error err = {{0}};
    CHECK_MSG(andrea_catalog_circuits_write(db, "/x/m.bin", SHA_A, &c, &err) == 0, "%s", err.msg);
    CHECK(q1(db, "UPDATE circuit_composition SET dst_head = 9 WHERE src_layer = 0 AND src_head = 0 AND dst_head = 1"
                 " RETURNING 1") == 1);
    CHECK(andrea_circuit_reader_open(db, SHA_A, &err) == NULL && strstr(err.msg, "outside the model's 2 x 2") != NULL);
    andrea_circuits_free(&c);
}

/* A first-layout catalog whose kind is not K, Q or V (its CHECK dropped: a hostile file): the head
 * pages print the kind as it is, and an empty one ended the page's circuits fragment at a NUL in
 * an open table cell (the rest of the page inside it). The reader refuses it. */
static void test_a_kind_other_than_k_q_or_v_is_refused_by_the_reader(void) {
    static const char *const bad[] = {"", "<", "QK", "\xff"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char db[1024], sql[256];
        snprintf(sql, sizeof sql, "circuits_kind%zu.db", i);
        path_in_tmp(db, sizeof db, sql);
        andrea_circuits c;
        fake(&c, 2, 2, 3);
        write_per_kind(db, &c);
        snprintf(sql, sizeof sql, "PRAGMA ignore_check_constraints = 1; UPDATE circuit_composition SET kind = '%s'"
                                  " WHERE src_head = 0 AND dst_head = 1 AND kind = 'Q'", bad[i]);
        sqlite3 *h = NULL;
        CHECK(sqlite3_open(db, &h) == SQLITE_OK && sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK && sqlite3_changes(h) == 1);
        sqlite3_close(h);
        ae_error err = {{0}};
        andrea_circuit_reader *r = andrea_circuit_reader_open(db, SHA_A, &err);
        CHECK_MSG(r == NULL && strstr(err.msg, "a kind that is not K, Q or V") != NULL, "kind '%s': %s", bad[i], err.msg);
        andrea_circuit_reader_close(r);
        andrea_circuits_free(&c);
    }
}

int main(void) {
    RUN(test_reader_links_equal_a_brute_force_sort_with_ties_and_nulls);
    RUN(test_earlier_layouts_are_read_as_they_are_and_migrated_by_the_next_writer);
    RUN(test_a_score_is_stored_as_its_nearest_millionth);
    RUN(test_a_row_outside_the_shape_is_refused_by_the_reader);
    RUN(test_a_kind_other_than_k_q_or_v_is_refused_by_the_reader);
    return check_summary("test_catalog_circuits");
}
