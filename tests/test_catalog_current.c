/* test_catalog_current.c — runs that coexist in one catalog (`current` per checkpoint and suite),
 * series names, the schema-1 migration, enforced foreign keys, and the `heads` filters and output
 * formats that go with them (docs/catalog.md). The CLI part runs ANDREA_BIN. */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../catalog/catalog.h"
#include "../analyzer/checkpoint_step.h"
#include "check.h"
#include "support/run_andrea.h"

#define L 2
#define H 3

/* A synthetic analysis of checkpoint ckpt (sha256 = 64 x sha_char) with the given suites; head
 * (1, 2) is labelled in the first suite with score `top`. */
static void make_analysis(andrea_analysis *a, char sha_char, const char *ckpt, const char *settings,
                          const char *const *names, int n, double top) {
    memset(a, 0, sizeof *a);
    snprintf(a->dump_path, sizeof a->dump_path, "/tmp/x.h5");
    snprintf(a->ckpt_path, sizeof a->ckpt_path, "%s", ckpt);
    memset(a->sha256, sha_char, 64);
    snprintf(a->maps_dtype, sizeof a->maps_dtype, "fp32");
    a->cfg.n_layer = L;
    a->cfg.n_head = H;
    a->cfg.d_model = 12;
    a->cfg.head_dim = 4;
    a->cfg.vocab_size = 257;
    a->cfg.padded_vocab_size = 320;
    a->cfg.max_seq_len = 64;
    a->has_step = andrea_step_from_name(ckpt, &a->step);
    a->settings_json = strdup(settings);
    a->n_suites = n;
    a->suites = calloc((size_t)n, sizeof *a->suites);
    for (int s = 0; s < n; s++) {
        andrea_suite_scores *su = &a->suites[s];
        snprintf(su->name, sizeof su->name, "%s", names[s]);
        su->pass = andrea_pass_for("induction");
        su->rule = su->pass->rule;
        su->n_items = 4;
        su->n_queries = 40;
        su->clean_loss = 2.0;
        su->ablation_mean = 0.01;
        su->heads = calloc(L * H, sizeof *su->heads);
        for (int i = 0; i < L * H; i++) {
            andrea_head_score *h = &su->heads[i];
            h->layer = i / H;
            h->head = i % H;
            h->score = 0.05 + 0.01 * i;
            h->baseline = h->control = 0.05;
            h->extra = h->ablation_delta = NAN;
            h->dla_mean = 0.1;
            h->norm_mean = 1.0;
            h->label = s == 0 && i == 5;
            if (h->label) h->score = top;
        }
    }
}

static const char *tmp_path(const char *name) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", check_tmpdir(), name);
    return buf[k];
}

static void write_run(const char *db, char sha, const char *ckpt, const char *settings, const char *const *names, int n,
                      double top) {
    andrea_analysis a;
    make_analysis(&a, sha, ckpt, settings, names, n, top);
    ae_error err = {{0}};
    CHECK_MSG(andrea_catalog_write(db, &a, NULL, &err) == 0, "%s", err.msg);
    andrea_analysis_free(&a);
}

static long long q1(const char *db_path, const char *sql) {
    sqlite3 *db;
    sqlite3_stmt *st;
    long long v = -999;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return -998;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        fprintf(stderr, "query failed: %s: %s\n", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}


static char *slurp(const char *path) {
    static char buf[2][65536];
    static int k;
    k ^= 1;
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf[k], 1, sizeof buf[k] - 1, f) : 0;
    if (f) fclose(f);
    buf[k][n] = 0;
    return buf[k];
}

static int lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static const char *const BUILTIN[] = {"induction", "bos"};
static const char *const CUSTOM[] = {"my_suite"};

/* ---------- library ---------- */

static void test_a_run_of_another_suite_keeps_the_first_runs_heads_current(void) {
    const char *db = tmp_path("coexist.db");
    write_run(db, 'a', "/m/bundled.bin", "{\"s\":1}", BUILTIN, 2, 0.9);
    write_run(db, 'a', "/m/bundled.bin", "{\"s\":2}", CUSTOM, 1, 0.8);
    CHECK(q1(db, "SELECT count(*) FROM runs") == 2);
    /* every head of every class is current exactly once */
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE current") == 3 * L * H);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE current AND class = 'induction' AND label") == 1);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE current AND class = 'my_suite' AND label") == 1);
    /* a newer run of the same suite takes over that suite only */
    write_run(db, 'a', "/m/bundled.bin", "{\"s\":3}", BUILTIN, 1, 0.7);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE current AND class = 'induction' AND score = 0.7") == 1);
    CHECK(q1(db, "SELECT run FROM head_catalog WHERE current AND class = 'bos' LIMIT 1") == 1);
}

static void test_series_is_the_name_without_its_step_part(void) {
    static const char *const cases[][2] = {
        {"run-step00400", "run"}, {"dyck-step08000", "dyck"}, {"model_step5", "model"},
        {"gpt2.iter-1200", "gpt2"}, {"x-CKPT300", "x"},       {"run-00400", "run"},
        {"andrea-bundled", "andrea-bundled"},                 {"gpt2", "gpt2"},
        {"step100", "step100"},                               {"model-v2", "model-v2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        andrea_catalog_series_from_name(cases[i][0], out, sizeof out);
        CHECK_MSG(!strcmp(out, cases[i][1]), "%s -> %s, want %s", cases[i][0], out, cases[i][1]);
    }
    const char *db = tmp_path("series.db");
    write_run(db, 'b', "/m/run-step00400.bin", "{}", BUILTIN, 2, 0.9);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE series = 'run' AND step = 400") == 2 * L * H);
}

static void test_deleting_a_run_removes_its_rows_with_or_without_foreign_keys(void) {
    const char *db = tmp_path("cascade.db");
    write_run(db, 'c', "/m/a.bin", "{\"s\":1}", BUILTIN, 2, 0.9);
    write_run(db, 'c', "/m/a.bin", "{\"s\":2}", BUILTIN, 2, 0.9);
    write_run(db, 'd', "/m/b.bin", "{\"s\":1}", BUILTIN, 2, 0.9);
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    /* the foreign keys are declared with ON DELETE CASCADE */
    CHECK(sqlite3_exec(h, "PRAGMA foreign_keys=ON; DELETE FROM runs WHERE id = 1", NULL, NULL, NULL) == SQLITE_OK);
    /* a connection that never turned them on (the sqlite3 shell's default) */
    CHECK(sqlite3_exec(h, "PRAGMA foreign_keys=OFF; DELETE FROM models WHERE name = 'b'", NULL, NULL, NULL) == SQLITE_OK);
    /* an insert pointing at no run is refused where keys are on, as andrea's connections have them */
    CHECK(sqlite3_exec(h, "PRAGMA foreign_keys=ON; INSERT INTO labels VALUES(99, 0, 0, 'bos', '{}')", NULL, NULL, NULL) ==
          SQLITE_CONSTRAINT);
    sqlite3_close(h);
    CHECK(q1(db, "SELECT count(*) FROM runs") == 1);
    CHECK(q1(db, "SELECT count(*) FROM head_scores WHERE run_id NOT IN (SELECT id FROM runs)") == 0);
    CHECK(q1(db, "SELECT count(*) FROM suites WHERE run_id NOT IN (SELECT id FROM runs)") == 0);
    CHECK(q1(db, "SELECT count(*) FROM labels WHERE run_id NOT IN (SELECT id FROM runs)") == 0);
    CHECK(q1(db, "SELECT count(*) FROM head_scores") == 2 * L * H);
}

/* The schema of andrea's first catalogs (schema version 1), as they were written. */
static const char *const SCHEMA_1 =
    "CREATE TABLE models(id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, name TEXT NOT NULL, path TEXT NOT NULL,"
    " config TEXT NOT NULL, n_layer INTEGER NOT NULL, n_head INTEGER NOT NULL, d_model INTEGER NOT NULL,"
    " head_dim INTEGER NOT NULL, step INTEGER);"
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, model_id INTEGER NOT NULL REFERENCES models(id), time TEXT NOT NULL,"
    " andrea_version TEXT NOT NULL, suites TEXT NOT NULL, settings TEXT NOT NULL, dump_path TEXT NOT NULL,"
    " maps_dtype TEXT, ablation_note TEXT);"
    "CREATE INDEX runs_model ON runs(model_id, settings);"
    "CREATE TABLE suites(run_id INTEGER NOT NULL REFERENCES runs(id), class TEXT NOT NULL, n_items INTEGER NOT NULL,"
    " n_queries INTEGER NOT NULL, min_score REAL NOT NULL, min_ratio REAL NOT NULL, min_margin REAL NOT NULL,"
    " ablation_items INTEGER NOT NULL, clean_loss REAL, ablation_mean REAL, PRIMARY KEY(run_id, class));"
    "CREATE TABLE head_scores(run_id INTEGER NOT NULL REFERENCES runs(id), layer INTEGER NOT NULL,"
    " head INTEGER NOT NULL, class TEXT NOT NULL, score REAL, baseline REAL, control REAL, ablation_delta REAL,"
    " ablation_mean REAL, dla_mean REAL, norm_mean REAL, n_queries INTEGER NOT NULL, extra_name TEXT,"
    " extra_value REAL, PRIMARY KEY(run_id, layer, head, class));"
    "CREATE TABLE labels(run_id INTEGER NOT NULL REFERENCES runs(id), layer INTEGER NOT NULL, head INTEGER NOT NULL,"
    " class TEXT NOT NULL, rule TEXT NOT NULL, PRIMARY KEY(run_id, layer, head, class));"
    "CREATE VIEW head_catalog AS SELECT m.name AS model, m.sha256 AS checkpoint_sha256, m.step AS step,"
    " r.id AS run, 1 AS latest, s.layer AS layer, s.head AS head, s.class AS class, s.score AS score,"
    " s.baseline AS baseline, s.ablation_delta AS ablation_delta, 0 AS label"
    " FROM head_scores s JOIN runs r ON r.id = s.run_id JOIN models m ON m.id = r.model_id;"
    "INSERT INTO models VALUES(1, 'eeee', 'old-step00100', '/m/old-step00100.bin', '{}', 2, 3, 12, 4, 100);"
    "INSERT INTO runs VALUES(1, 1, 't', '0', 'bos', '{}', '/x.h5', 'fp32', NULL);"
    "INSERT INTO suites VALUES(1, 'bos', 4, 40, 0.3, 2, 0.1, 0, NULL, NULL);"
    "INSERT INTO head_scores VALUES(1, 0, 0, 'bos', 0.5, 0.1, 0.1, NULL, NULL, NULL, NULL, 40, NULL, NULL);"
    "INSERT INTO labels VALUES(1, 0, 0, 'bos', '{}');"
    /* an orphan: its run was deleted by hand while the keys were not enforced */
    "INSERT INTO head_scores VALUES(7, 0, 0, 'bos', 0.5, 0.1, 0.1, NULL, NULL, NULL, NULL, 40, NULL, NULL);"
    "PRAGMA user_version=1; PRAGMA application_id=1095648338;";

static const char *schema_1_catalog(const char *name) {
    const char *db = tmp_path(name);
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h, SCHEMA_1, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
    return db;
}

static void test_a_schema_1_catalog_is_migrated_by_the_next_write(void) {
    const char *db = schema_1_catalog("v1.db");
    write_run(db, 'f', "/m/new.bin", "{}", BUILTIN, 2, 0.9);
    CHECK(q1(db, "PRAGMA user_version") == ANDREA_CATALOG_SCHEMA_VERSION);
    CHECK(q1(db, "SELECT count(*) FROM runs") == 2);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE model = 'old-step00100' AND series = 'old' AND current AND label") == 1);
    CHECK(q1(db, "SELECT count(*) FROM head_scores WHERE run_id = 7") == 0); /* the orphan is gone */
    CHECK(q1(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v1'") == 0);
    CHECK(q1(db, "SELECT count(*) FROM pragma_foreign_key_list('head_scores') WHERE on_delete = 'CASCADE'") == 1);
}

/* ---------- the CLI ---------- */

static const char *cli_db(void) {
    static char db[512];
    if (!db[0]) {
        snprintf(db, sizeof db, "%s", tmp_path("cli.db"));
        static const char *const steps[] = {"/m/run-step00030.bin", "/m/run-step00300.bin", "/m/run-step03000.bin"};
        for (int i = 0; i < 3; i++) write_run(db, (char)('1' + i), steps[i], "{}", BUILTIN, 2, i < 2 ? 0.04 : 0.95676216712364781);
        /* labelled only at the last step: the early ones score low but are stored as labelled
         * by make_analysis; unlabel them to look like a forming head */
        sqlite3 *h;
        if (sqlite3_open(db, &h) == SQLITE_OK) {
            sqlite3_exec(h, "DELETE FROM labels WHERE run_id IN (SELECT r.id FROM runs r JOIN models m ON m.id = r.model_id"
                            " WHERE m.step < 3000)", NULL, NULL, NULL);
            sqlite3_close(h);
        }
        write_run(db, 'z', "/m/other.bin", "{}", CUSTOM, 1, 0.9);
    }
    return db;
}

static void test_heads_with_an_unknown_class_says_so_and_exits_2(void) {
    const char *out = tmp_path("unknown.out");
    const char *args[] = {"heads", "--db", cli_db(), "--class", "inductoin", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 2);
    char errp[600];
    snprintf(errp, sizeof errp, "%s.err", out);
    const char *e = slurp(errp);
    CHECK(lines(e) == 1 && strstr(e, "no class 'inductoin'") && strstr(e, "induction"));
    CHECK(!strcmp(slurp(out), ""));
}

static void test_heads_with_a_layer_or_head_out_of_range_exits_2(void) {
    const char *out = tmp_path("range.out");
    const char *layer[] = {"heads", "--db", cli_db(), "--layer", "2", NULL};
    CHECK(andrea_test_run_andrea(layer, out) == 2);
    const char *head[] = {"heads", "--db", cli_db(), "--head", "1.3", NULL};
    CHECK(andrea_test_run_andrea(head, out) == 2);
    char errp[600];
    snprintf(errp, sizeof errp, "%s.err", out);
    CHECK(lines(slurp(errp)) == 1 && strstr(slurp(errp), "head 1.3 is out of range"));
    const char *junk[] = {"heads", "--db", cli_db(), "--head", "1", NULL};
    CHECK(andrea_test_run_andrea(junk, out) == 2);
}

static void test_heads_refuses_bad_step_and_pivot_values_in_one_line(void) {
    const char *out = tmp_path("badval.out");
    char errp[600];
    snprintf(errp, sizeof errp, "%s.err", out);
    const char *step[] = {"heads", "--db", cli_db(), "--step", "3k", NULL};
    CHECK(andrea_test_run_andrea(step, out) == 2 && lines(slurp(errp)) == 1 && strstr(slurp(errp), "--step wants"));
    const char *neg[] = {"heads", "--db", cli_db(), "--step", "-1", NULL};
    CHECK(andrea_test_run_andrea(neg, out) == 2);
    const char *pivot[] = {"heads", "--db", cli_db(), "--series", "run", "--pivot", "layer", NULL};
    CHECK(andrea_test_run_andrea(pivot, out) == 2 && lines(slurp(errp)) == 1 && strstr(slurp(errp), "--pivot wants 'step'"));
    const char *head[] = {"heads", "--db", cli_db(), "--head", "1.2.3", NULL};
    CHECK(andrea_test_run_andrea(head, out) == 2 && strstr(slurp(errp), "--head wants LAYER.HEAD"));
    /* an unknown series is a usage error naming the series there are, like an unknown class:
     * an empty table would look like "no head of that series is labelled" */
    const char *series[] = {"heads", "--db", cli_db(), "--series", "nothing", "--format", "csv", NULL};
    CHECK(andrea_test_run_andrea(series, out) == 2 && lines(slurp(errp)) == 1 && strstr(slurp(errp), "matches no series"));
}

static void test_heads_filters_by_head_and_step(void) {
    const char *out = tmp_path("filter.out");
    const char *args[] = {"heads", "--db", cli_db(), "--all", "--head", "1.2", "--step", "300", "--format", "csv", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 0);
    const char *s = slurp(out);
    CHECK(lines(s) == 3); /* header + induction + bos */
    CHECK(strstr(s, "run-step00300,run,300,1,2,induction,") != NULL);
    CHECK(strstr(s, "run-step00300,run,300,1,2,bos,") != NULL);
}

static void test_heads_csv_and_json_print_reals_exactly(void) {
    const char *out = tmp_path("exact.out");
    const char *csv[] = {"heads", "--db", cli_db(), "--class", "induction", "--step", "3000", "--format", "csv", NULL};
    CHECK(andrea_test_run_andrea(csv, out) == 0);
    CHECK(strstr(slurp(out), ",0.95676216712364781,") != NULL);
    const char *json[] = {"heads", "--db", cli_db(), "--class", "induction", "--step", "3000", "--format", "json", NULL};
    CHECK(andrea_test_run_andrea(json, out) == 0);
    CHECK(strstr(slurp(out), "0.95676216712364781") != NULL);
    const char *table[] = {"heads", "--db", cli_db(), "--class", "induction", "--step", "3000", NULL};
    CHECK(andrea_test_run_andrea(table, out) == 0);
    CHECK(strstr(slurp(out), " 0.956762 ") != NULL); /* the table stays readable */
}

static void test_model_matches_a_series_name(void) {
    const char *out = tmp_path("series.out");
    const char *args[] = {"heads", "--db", cli_db(), "--model", "run", "--all", "--class", "bos", "--format", "csv", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 0);
    CHECK(lines(slurp(out)) == 1 + 3 * L * H);
}

static void test_heads_pivot_step_prints_a_head_by_step_table(void) {
    const char *out = tmp_path("pivot.out");
    const char *args[] = {"heads", "--db", cli_db(), "--series", "run", "--pivot", "step", "--class", "induction", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 0);
    const char *s = slurp(out);
    CHECK(strstr(s, "class") == s && strstr(s, "step 30") && strstr(s, "step 300") && strstr(s, "step 3000"));
    CHECK(lines(s) == 1 + L * H);
    /* head 1.2: unlabelled at 30 and 300, labelled (marked) at 3000 */
    const char *row = strstr(s, "induction  1.2");
    CHECK(row && strstr(row, "0.040 ") && strstr(row, "0.957*"));
    const char *nos[] = {"heads", "--db", cli_db(), "--pivot", "step", NULL};
    CHECK(andrea_test_run_andrea(nos, out) == 2);
}

static void test_heads_on_a_schema_1_catalog_says_how_to_upgrade(void) {
    const char *db = schema_1_catalog("v1cli.db");
    const char *out = tmp_path("v1.out");
    const char *args[] = {"heads", "--db", db, NULL};
    CHECK(andrea_test_run_andrea(args, out) == 1);
    char errp[600];
    snprintf(errp, sizeof errp, "%s.err", out);
    CHECK(strstr(slurp(errp), "schema version 1 is older") != NULL);
}

static void test_sql_shows_a_newline_as_backslash_n(void) {
    const char *out = tmp_path("nl.out");
    const char *args[] = {"sql", cli_db(), "SELECT 'a' || char(10) || 'b' AS t", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 0);
    CHECK(!strcmp(slurp(out), "t\na\\nb\n"));
}

int main(void) {
    RUN(test_a_run_of_another_suite_keeps_the_first_runs_heads_current);
    RUN(test_series_is_the_name_without_its_step_part);
    RUN(test_deleting_a_run_removes_its_rows_with_or_without_foreign_keys);
    RUN(test_a_schema_1_catalog_is_migrated_by_the_next_write);
    if (!getenv("ANDREA_BIN")) {
        fprintf(stderr, "SKIP (CLI part): ANDREA_BIN not set\n");
        return check_summary("test_catalog_current");
    }
    RUN(test_heads_with_an_unknown_class_says_so_and_exits_2);
    RUN(test_heads_with_a_layer_or_head_out_of_range_exits_2);
    RUN(test_heads_refuses_bad_step_and_pivot_values_in_one_line);
    RUN(test_heads_filters_by_head_and_step);
    RUN(test_heads_csv_and_json_print_reals_exactly);
    RUN(test_model_matches_a_series_name);
    RUN(test_heads_pivot_step_prints_a_head_by_step_table);
    RUN(test_heads_on_a_schema_1_catalog_says_how_to_upgrade);
    RUN(test_sql_shows_a_newline_as_backslash_n);
    return check_summary("test_catalog_current");
}
