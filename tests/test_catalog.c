/* test_catalog.c — the SQLite head catalog: runs, replacement, crashes, concurrent writers, and
 * the read-only `andrea heads` / `andrea sql` commands (run through ANDREA_BIN). */
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../analyzer/ablation_stats.h"
#include "../catalog/catalog.h"
#include "../analyzer/checkpoint_step.h"
#include "../catalog/catalog_circuits.h"
#include "../catalog/catalog_report.h"
#include "check.h"
#include "support/run_andrea.h"

#define L 2
#define H 3

/* A synthetic analysis: two suites over an L x H model; head (1, 2) is labelled induction. */
static void make_analysis(andrea_analysis *a, const char *sha_char, const char *ckpt, const char *settings) {
    memset(a, 0, sizeof *a);
    snprintf(a->dump_path, sizeof a->dump_path, "/tmp/x.h5");
    snprintf(a->ckpt_path, sizeof a->ckpt_path, "%s", ckpt);
    for (int i = 0; i < 64; i++) a->sha256[i] = sha_char[0];
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
    a->n_suites = 2;
    a->suites = calloc(2, sizeof *a->suites);
    const char *names[2] = {"induction", "bos"};
    for (int s = 0; s < 2; s++) {
        andrea_suite_scores *su = &a->suites[s];
        snprintf(su->name, sizeof su->name, "%s", names[s]);
        su->pass = andrea_pass_for(names[s]);
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
            h->baseline = 0.05;
            h->control = 0.05;
            h->extra = NAN;
            h->ablation_delta = i == 5 && s == 0 ? 0.5 : NAN;
            h->dla_mean = 0.1;
            h->norm_mean = 1.0;
            h->label = (s == 0 && i == 5);
            if (h->label) h->score = 0.9;
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

/* One integer from a query on the catalog (opened directly, not through andrea). */
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

static void test_run_lands_in_the_head_catalog_view_with_its_label(void) {
    const char *db = tmp_path("one.db");
    andrea_analysis a;
    make_analysis(&a, "a", "/m/ckpt_step1200.bin", "{\"s\":1}");
    ae_error err = {{0}};
    int64_t run = 0;
    CHECK(andrea_catalog_write(db, &a, &run, &err) == 0);
    CHECK(run > 0);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog") == 2 * L * H);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE label = 1") == 1);
    CHECK(q1(db, "SELECT layer * 10 + head FROM head_catalog WHERE label = 1 AND class = 'induction'") == 12);
    CHECK(q1(db, "SELECT step FROM head_catalog LIMIT 1") == 1200);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE model = 'ckpt_step1200'") == 2 * L * H);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE ablation_delta IS NULL") == 2 * L * H - 1);
    CHECK(q1(db, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'") == 1);
    andrea_analysis_free(&a);
}

/* Runs one SQL statement on db with the SQLite library itself (the test's own hand, not andrea's). */
static void exec_sql(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK_MSG(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_close(db);
}

/* The whole file into buf (at most cap bytes); its length, or 0. */
static size_t file_bytes(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n < cap ? n : 0;
}

static void test_another_applications_database_is_refused_and_left_unchanged(void) {
    const char *db = tmp_path("foreign.db");
    exec_sql(db, "CREATE TABLE users(id INTEGER, name TEXT); INSERT INTO users VALUES(1, 'ada')");
    andrea_analysis a;
    make_analysis(&a, "f", "/m/ckpt.bin", "{\"s\":1}");
    ae_error err = {{0}};
    static char before[65536], after[65536];
    size_t nb = file_bytes(db, before, sizeof before);
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == -1);
    CHECK_MSG(strstr(err.msg, "not an andrea catalog") && strstr(err.msg, "'users'"), "%s", err.msg);
    CHECK(nb > 0 && file_bytes(db, after, sizeof after) == nb && memcmp(before, after, nb) == 0); /* byte-identical */
    CHECK(q1(db, "SELECT count(*) FROM sqlite_master") == 1); /* no andrea table added */
    CHECK(q1(db, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'") == 0);
    andrea_analysis_free(&a);
}

static void test_a_catalog_made_before_the_application_id_is_still_written(void) {
    const char *db = tmp_path("unmarked.db");
    andrea_analysis a;
    make_analysis(&a, "c", "/m/ckpt.bin", "{\"s\":1}");
    ae_error err = {{0}};
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == 0);
    CHECK(q1(db, "SELECT application_id FROM pragma_application_id") == ANDREA_CATALOG_APPLICATION_ID);
    exec_sql(db, "PRAGMA application_id = 0"); /* as older andreas left it */
    andrea_analysis_free(&a);
    make_analysis(&a, "d", "/m/other.bin", "{\"s\":1}");
    CHECK_MSG(andrea_catalog_write(db, &a, NULL, &err) == 0, "%s", err.msg);
    CHECK(q1(db, "SELECT count(DISTINCT model) FROM head_catalog") == 2);
    exec_sql(db, "PRAGMA application_id = 7"); /* some other program's mark: refused */
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == -1);
    andrea_analysis_free(&a);
}

static void test_same_checkpoint_and_settings_replaces_its_run(void) {
    const char *db = tmp_path("replace.db");
    andrea_analysis a;
    make_analysis(&a, "b", "/m/b.bin", "{\"s\":1}");
    ae_error err = {{0}};
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == 0);
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == 0);
    CHECK(q1(db, "SELECT count(*) FROM runs") == 1);
    CHECK(q1(db, "SELECT count(*) FROM head_scores") == 2 * L * H);
    CHECK(q1(db, "SELECT count(*) FROM labels") == 1);
    andrea_analysis_free(&a);
    /* Other settings: a second run beside the first. */
    make_analysis(&a, "b", "/m/b.bin", "{\"s\":2}");
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == 0);
    CHECK(q1(db, "SELECT count(*) FROM runs") == 2);
    CHECK(q1(db, "SELECT count(*) FROM models") == 1);
    andrea_analysis_free(&a);
}

/* One sha256, one shape: a run of another shape under a catalogued checkpoint's sha256 (a crafted
 * dump) was filed under that model, its heads out of the model's range. */
static void test_a_second_shape_under_one_sha256_is_refused(void) {
    const char *db = tmp_path("shape.db");
    andrea_analysis a;
    make_analysis(&a, "s", "/m/s.bin", "{\"s\":1}");
    ae_error err = {{0}};
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == 0);
    andrea_analysis_free(&a);
    make_analysis(&a, "s", "/m/other.h5", "{\"s\":2}");
    a.cfg.d_model = 24;
    a.cfg.head_dim = 8;
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == -1);
    CHECK_MSG(strstr(err.msg, "as 2 layers x 3 heads (d_model 12); /m/other.h5 has 2 x 3 (d_model 24)") != NULL, "%s", err.msg);
    CHECK(q1(db, "SELECT count(*) FROM runs") == 1);
    CHECK(q1(db, "SELECT d_model FROM models") == 12);
    andrea_analysis_free(&a);
}

static void test_many_checkpoints_share_one_catalog(void) {
    const char *db = tmp_path("many.db");
    ae_error err = {{0}};
    const char *shas[3] = {"c", "d", "e"};
    const char *paths[3] = {"/r/run_step100.bin", "/r/run_step200.bin", "/r/run_step300.bin"};
    for (int i = 0; i < 3; i++) {
        andrea_analysis a;
        make_analysis(&a, shas[i], paths[i], "{}");
        CHECK(andrea_catalog_write(db, &a, NULL, &err) == 0);
        andrea_analysis_free(&a);
    }
    CHECK(q1(db, "SELECT count(DISTINCT checkpoint_sha256) FROM head_catalog") == 3);
    CHECK(q1(db, "SELECT sum(step) FROM models") == 600);
}

/* Two cells hold the same: numbers bit for bit, the words as strings (the bytes after them are
 * not set). */
static int same_cells(const catalog_head_cell *a, const catalog_head_cell *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i].score, &b[i].score, sizeof a[i].score) || memcmp(&a[i].baseline, &b[i].baseline, sizeof(double)) ||
            memcmp(&a[i].control, &b[i].control, sizeof(double)) || memcmp(&a[i].ablation, &b[i].ablation, sizeof(double)) ||
            a[i].label != b[i].label || a[i].causal != b[i].causal || strcmp(a[i].evidence, b[i].evidence) ||
            strcmp(a[i].ablation_method, b[i].ablation_method))
            return 0;
    return 1;
}

/* Two report rows of one checkpoint hold the same. */
static int same_rows(const catalog_report_rows *a, const catalog_report_rows *b) {
    const size_t cells = (size_t)a->n_classes * L * H;
    if (a->n_classes != b->n_classes || a->n_steps != b->n_steps || strcmp(a->model, b->model) ||
        strcmp(a->run_name, b->run_name) || !a->scores != !b->scores || !a->step_scores != !b->step_scores)
        return 0;
    for (int c = 0; c < a->n_classes; c++)
        if (strcmp(a->classes[c], b->classes[c])) return 0;
    return (!a->scores || same_cells(a->scores, b->scores, cells)) &&
           (a->n_steps == 0 || !memcmp(a->steps, b->steps, (size_t)a->n_steps * sizeof *a->steps)) &&
           (!a->step_scores || same_cells(a->step_scores, b->step_scores, (size_t)a->n_steps * cells));
}

/* The report rows read through a cache shared by many reports (a series' reports) equal those read
 * alone: for every checkpoint of a run of 4 steps, of another run in the same catalog, and of a
 * second catalog read through the same cache afterwards. */
static void test_report_rows_through_a_shared_cache_equal_those_read_alone(void) {
    const char *dbs[2] = {tmp_path("cache1.db"), tmp_path("cache2.db")};
    const char *shas[6] = {"f", "g", "h", "i", "j", "k"};
    const char *paths[6] = {"/r/run_step100.bin", "/r/run_step200.bin", "/r/run_step300.bin", "/r/run_step400.bin",
                            "/r/other_step100.bin", "/r/other_step200.bin"};
    ae_error err = {{0}};
    for (int i = 0; i < 6; i++) { /* catalog 1: run (4 steps), other (1); catalog 2: other's second step too */
        andrea_analysis a;
        make_analysis(&a, shas[i], paths[i], "{}");
        for (int s = 0; s < a.n_suites; s++) /* every checkpoint scores differently: a mixed-up step shows */
            for (int h = 0; h < L * H; h++) a.suites[s].heads[h].score += 0.001 * (i + 1) + 0.0001 * s;
        if (i < 5) CHECK_MSG(andrea_catalog_write(dbs[0], &a, NULL, &err) == 0, "%s", err.msg);
        if (i >= 4) CHECK_MSG(andrea_catalog_write(dbs[1], &a, NULL, &err) == 0, "%s", err.msg);
        andrea_analysis_free(&a);
    }
    catalog_report_cache *cache = andrea_catalog_report_cache_new();
    CHECK(cache != NULL);
    const char *first[1] = {"bos"};
    int compared = 0, with_steps = 0;
    for (int k = 0; k < 7; k++) {
        const int db = k < 5 ? 0 : 1;
        char sha[65];
        memset(sha, shas[k < 5 ? k : k - 1][0], 64);
        sha[64] = 0;
        catalog_report_rows alone = {.sha256 = sha, .n_layer = L, .n_head = H, .first = first, .n_first = 1};
        catalog_report_rows cached = alone;
        cached.cache = cache;
        CHECK_MSG(andrea_catalog_report_rows(&alone, dbs[db], &err) == 0, "%s", err.msg);
        CHECK_MSG(andrea_catalog_report_rows(&cached, dbs[db], &err) == 0, "%s", err.msg);
        CHECK_MSG(same_rows(&alone, &cached), "checkpoint %s of catalog %d: the cached rows differ", shas[k < 5 ? k : k - 1], db + 1);
        compared++;
        with_steps += alone.n_steps;
        andrea_catalog_report_rows_free(&alone);
        andrea_catalog_report_rows_free(&cached);
    }
    CHECK_MSG(compared == 7 && with_steps == 4 * 4 + 2 * 2, "%d compared, %d steps", compared, with_steps);
    andrea_catalog_report_cache_free(cache);
}

/* Circuit scores of the fake shape: NaN but below the diagonal of layers. */
static void small_circuits(andrea_circuits *c) {
    const size_t NH = (size_t)L * H;
    memset(c, 0, sizeof *c);
    c->n_layer = L;
    c->n_head = H;
    c->d_model = 12;
    c->head_dim = 4;
    c->baseline = 0.25;
    c->comp = malloc(3 * NH * NH * sizeof *c->comp);
    c->copying = calloc(NH, sizeof *c->copying);
    c->prev_pos = calloc(NH, sizeof *c->prev_pos);
    for (size_t k = 0; c->comp && k < 3 * NH * NH; k++)
        c->comp[k] = (k % NH) / H > (k / NH % NH) / H ? 0.5 : NAN;
}

/* analyze's write: a series' runs with their circuit scores in one transaction. When the last
 * entry cannot be stored (here a run without settings, which the schema refuses), none of the
 * entries is, not even the complete ones before it, and the catalog is as it was; with the entry
 * mended, all of them land. */
static void test_write_all_stores_every_entry_or_none(void) {
    const char *db = tmp_path("all.db");
    andrea_analysis a[3];
    andrea_circuits c[3];
    andrea_catalog_entry e[3];
    const char *ckpts[3] = {"/m/run_step100.bin", "/m/run_step200.bin", "/m/run_step300.bin"};
    for (int i = 0; i < 3; i++) {
        make_analysis(&a[i], i == 0 ? "a" : i == 1 ? "b" : "c", ckpts[i], "{\"s\":1}");
        small_circuits(&c[i]);
        e[i] = (andrea_catalog_entry){.analysis = &a[i], .circuits = &c[i], .ckpt_path = ckpts[i], .sha256 = a[i].sha256};
    }
    ae_error err = {{0}};
    CHECK_MSG(andrea_catalog_write_all(db, e, 1, &err) == 0, "%s", err.msg); /* the catalog before */
    CHECK(q1(db, "SELECT count(*) FROM runs") == 1);
    char *settings = a[2].settings_json;
    a[2].settings_json = NULL;
    e[0].analysis = NULL; /* its circuit scores alone, replacing the stored ones */
    CHECK(andrea_catalog_write_all(db, e, 3, &err) == -1);
    CHECK_MSG(strstr(err.msg, "all.db") != NULL, "%s", err.msg);
    CHECK(q1(db, "SELECT count(*) FROM runs") == 1);
    CHECK(q1(db, "SELECT count(*) FROM models") == 1);
    CHECK(q1(db, "SELECT count(*) FROM circuit_runs") == 1);
    CHECK(q1(db, "SELECT max(id) FROM circuit_runs") == 1); /* not replaced */
    a[2].settings_json = settings;
    CHECK_MSG(andrea_catalog_write_all(db, e, 3, &err) == 0, "%s", err.msg);
    CHECK(q1(db, "SELECT count(*) FROM runs") == 3);
    CHECK(q1(db, "SELECT count(*) FROM circuit_runs") == 3);
    CHECK(q1(db, "SELECT sum(step) FROM models") == 600);
    for (int i = 0; i < 3; i++) {
        andrea_analysis_free(&a[i]);
        andrea_circuits_free(&c[i]);
    }
}

static void test_step_is_parsed_from_common_file_names(void) {
    long long s = 0;
    CHECK(andrea_step_from_name("/x/model_step12000.bin", &s) == 1 && s == 12000);
    CHECK(andrea_step_from_name("ckpt/step-1200", &s) == 1 && s == 1200);
    CHECK(andrea_step_from_name("/x/final.bin", &s) == 0);
    CHECK(andrea_step_from_name("/steps/final.bin", &s) == 0);
    CHECK(andrea_step_from_name("/x/run_step100.final.safetensors", &s) == 1 && s == 100);
    /* up to 2^53 - 1, as trainer_state.json's global_step (a 16-digit step was none, silently) */
    CHECK(andrea_step_from_name("/x/checkpoint-9007199254740991", &s) == 1 && s == 9007199254740991LL);
    CHECK(andrea_step_from_name("/x/checkpoint-9007199254740992", &s) == 0);
    CHECK(andrea_step_from_name("/x/checkpoint-99999999999999999999", &s) == 0);
}

/* A number the name writes in another notation is no step: its leading digits would be a wrong
 * one (model.step3e3 was stored at step 3, run_step100k at 100). */
static void test_step_written_in_another_notation_is_no_step(void) {
    long long s = -1;
    CHECK(andrea_step_from_name("/x/model.step3e3.bin", &s) == 0 && s == -1);
    CHECK(andrea_step_from_name("run_step100k.bin", &s) == 0 && s == -1);
    CHECK(andrea_step_from_name("run-step1.5e4.bin", &s) == 0 && s == -1);
    CHECK(andrea_step_from_name("run_step2x", &s) == 0 && s == -1);
    CHECK(andrea_step_from_name("run_step3e3_step200.bin", &s) == 1 && s == 200);
}

/* Hugging Face Trainer's checkpoint-N folders and step_N / stepN / iter_N names: the step from the
 * name (a folder's trailing '/' too); "iter" and "checkpoint" only where a word begins. */
static void test_trainer_and_step_only_names_give_their_step(void) {
    long long s = -1;
    CHECK(andrea_step_from_name("/r/run1/checkpoint-500", &s) == 1 && s == 500);
    CHECK(andrea_step_from_name("/r/run1/checkpoint-500/", &s) == 1 && s == 500);
    CHECK(andrea_step_from_name("run1/iter_300.bin", &s) == 1 && s == 300);
    CHECK(andrea_step_from_name("run1/iter70", &s) == 1 && s == 70);
    CHECK(andrea_step_from_name("gpt2.iter-1200.bin", &s) == 1 && s == 1200);
    s = -1;
    CHECK(andrea_step_from_name("/m/twitter5.bin", &s) == 0 && s == -1);
    CHECK(andrea_step_from_name("/m/checkpoint-5e3", &s) == 0 && s == -1);
    CHECK(andrea_is_step_name("checkpoint-500") && andrea_is_step_name("step_100") &&
          andrea_is_step_name("Step100") && andrea_is_step_name("step-100") &&
          andrea_is_step_name("iter_100") && andrea_is_step_name("iter100"));
    CHECK(!andrea_is_step_name("run-step100") && !andrea_is_step_name("checkpoint-500.final") &&
          !andrea_is_step_name("checkpoint") && !andrea_is_step_name("step100k") &&
          !andrea_is_step_name("ckpt-3"));
}

/* A checkpoint whose name is only a step is catalogued as RUN/NAME, its series the run folder. */
static void test_step_only_name_is_catalogued_with_its_run_folder(void) {
    char series[64];
    andrea_catalog_series_from_name("run1/checkpoint-500", series, sizeof series);
    CHECK_MSG(!strcmp(series, "run1"), "%s", series);
    andrea_catalog_series_from_name("gpt-2_small/step_100", series, sizeof series);
    CHECK_MSG(!strcmp(series, "gpt-2_small"), "%s", series);
    const char *db = tmp_path("trainer.db");
    const char *shas[4] = {"a", "b", "c", "d"};
    const char *paths[4] = {"/r/run1/checkpoint-1000/", "/r/run1/step_200.bin", "/r/run1/model_step300.bin", "checkpoint-400"};
    for (int i = 0; i < 4; i++) {
        andrea_analysis a;
        ae_error err = {{0}};
        make_analysis(&a, shas[i], paths[i], "{}");
        CHECK_MSG(andrea_catalog_write(db, &a, NULL, &err) == 0, "%s", err.msg);
        andrea_analysis_free(&a);
    }
    CHECK(q1(db, "SELECT count(*) FROM models WHERE name = 'run1/checkpoint-1000' AND series = 'run1' AND step = 1000") == 1);
    CHECK(q1(db, "SELECT count(*) FROM models WHERE name = 'run1/step_200' AND series = 'run1' AND step = 200") == 1);
    CHECK(q1(db, "SELECT count(*) FROM models WHERE name = 'model_step300' AND series = 'model'") == 1);
    CHECK(q1(db, "SELECT count(*) FROM models WHERE name = 'checkpoint-400' AND series = 'checkpoint'") == 1);
}

static void test_catalog_killed_mid_run_keeps_all_or_none_of_it(void) {
#ifndef ANDREA_TESTING
    printf("SKIP (this case): the crash hook is compiled into test builds only (-DANDREA_TESTING=ON)\n");
    return;
#endif
    const char *db = tmp_path("crash.db");
    ae_error err = {{0}};
    andrea_analysis a;
    make_analysis(&a, "f", "/m/first.bin", "{}");
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == 0);
    andrea_analysis_free(&a);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("ANDREA_TEST_CRASH_AT", "mid-run", 1);
        andrea_analysis b;
        make_analysis(&b, "g", "/m/second.bin", "{}");
        ae_error e2;
        andrea_catalog_write(db, &b, NULL, &e2);
        _exit(3); /* not reached: the hook kills the process inside the transaction */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    sqlite3_stmt *st;
    CHECK(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK);
    CHECK(sqlite3_step(st) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "ok"));
    sqlite3_finalize(st);
    sqlite3_close(h);
    CHECK(q1(db, "SELECT count(*) FROM models") == 1);
    CHECK(q1(db, "SELECT count(*) FROM runs") == 1);
    CHECK(q1(db, "SELECT count(*) FROM head_scores") == 2 * L * H);
    /* ... and the catalog still takes the run afterwards. */
    make_analysis(&a, "g", "/m/second.bin", "{}");
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == 0);
    CHECK(q1(db, "SELECT count(*) FROM runs") == 2);
    andrea_analysis_free(&a);
}

static void test_two_processes_writing_one_catalog_both_land(void) {
    const char *db = tmp_path("concurrent.db");
    pid_t pids[2];
    for (int p = 0; p < 2; p++) {
        pids[p] = fork();
        if (pids[p] == 0) {
            /* 20 runs each, interleaving with the other process from a brand-new file on. */
            for (int i = 0; i < 20; i++) {
                andrea_analysis a;
                char settings[64];
                snprintf(settings, sizeof settings, "{\"i\":%d}", i);
                make_analysis(&a, p ? "h" : "i", p ? "/m/h.bin" : "/m/i.bin", settings);
                ae_error e;
                if (andrea_catalog_write(db, &a, NULL, &e)) {
                    fprintf(stderr, "writer %d: %s\n", p, e.msg);
                    _exit(1);
                }
                andrea_analysis_free(&a);
            }
            _exit(0);
        }
    }
    for (int p = 0; p < 2; p++) {
        int status = 0;
        waitpid(pids[p], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    CHECK(q1(db, "SELECT count(*) FROM runs") == 40);
    CHECK(q1(db, "SELECT count(*) FROM models") == 2);
    CHECK(q1(db, "SELECT count(*) FROM head_scores") == 40 * 2 * L * H);
}

/* ---------- the CLI on a catalog ---------- */


static char *slurp(const char *path) {
    static char buf[65536];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return buf;
}

static const char *cli_db(void) {
    static const char *db;
    if (!db) {
        db = strdup(tmp_path("cli.db"));
        andrea_analysis a;
        make_analysis(&a, "j", "/m/cli_step7.bin", "{}");
        ae_error err = {{0}};
        if (andrea_catalog_write(db, &a, NULL, &err)) fprintf(stderr, "%s\n", err.msg);
        andrea_analysis_free(&a);
    }
    return db;
}

static void test_heads_lists_the_labelled_head_by_default(void) {
    const char *out = tmp_path("heads.out");
    const char *args[] = {"heads", "--db", cli_db(), "--format", "csv", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 0);
    char *s = slurp(out);
    CHECK(strstr(s, "model,series,step,layer,head,class,score") == s);
    CHECK(strstr(s, "cli_step7,cli,7,1,2,induction,0.9") != NULL);
    int lines = 0;
    for (char *p = s; *p; p++) lines += *p == '\n';
    CHECK(lines == 2);
}

/* causal = 1 when a head's ablation rise stands above its suite's mean rise, 0 when not, NULL
 * when it was not measured; `heads` shows it. */
static void test_causal_flag_is_set_above_the_mean_rise_and_null_when_not_measured(void) {
    const char *db = tmp_path("causal.db");
    andrea_analysis a;
    make_analysis(&a, "c", "/m/causal.bin", "{}");
    a.suites[0].heads[4].ablation_delta = 0.004; /* below the mean 0.01 */
    ae_error err = {{0}};
    CHECK_MSG(andrea_catalog_write(db, &a, NULL, &err) == 0, "%s", err.msg);
    andrea_analysis_free(&a);
    CHECK(q1(db, "SELECT causal FROM head_catalog WHERE class = 'induction' AND layer * 3 + head = 5") == 1);
    CHECK(q1(db, "SELECT causal FROM head_catalog WHERE class = 'induction' AND layer * 3 + head = 4") == 0);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE causal IS NULL") == 2 * L * H - 2);
    const char *out = tmp_path("causal.out");
    const char *args[] = {"heads", "--db", db, "--format", "csv", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 0);
    char *txt = slurp(out);
    CHECK_MSG(strstr(txt, ",ablation,ablation_delta,ablation_ci_low,ablation_ci_high,ablation_pct,evidence,causal,") != NULL,
              "%s", txt);
    CHECK_MSG(strstr(txt, ",,0.5,,,,,1,") != NULL, "%s", txt); /* no method, no interval or verdict: the mean rule */
}

/* The causal check's evidence lands in its columns (schema 3): the method in runs, the set and the
 * random sets in suites, interval, percentile, leave-one-in and verdict in head_scores; causal
 * follows the verdict (pattern_only: 0 though its delta is above the mean); the note on missing
 * intervals joins the run's note. */
static void test_causal_evidence_is_stored_and_causal_follows_the_verdict(void) {
    const char *db = tmp_path("evidence.db");
    andrea_analysis a;
    make_analysis(&a, "e", "/m/evidence.bin", "{}");
    snprintf(a.ablation, sizeof a.ablation, "resample");
    snprintf(a.ablation_note, sizeof a.ablation_note, "no causal check for bos: resample ablation needs 2 items, it has 1");
    snprintf(a.interval_note, sizeof a.interval_note, "no intervals or verdicts: test");
    andrea_suite_scores *su = &a.suites[0];
    su->n_ablation_items = 8;
    su->ablation_median = 0.002, su->ablation_mad = 0.001, su->group_size = 1, su->n_controls = 20;
    su->group_delta = 0.5, su->group_ci_low = 0.25, su->group_ci_high = 0.75;
    su->control_median = 0.003, su->control_mad = NAN, su->control_q80 = 0.02, su->control_max = 0.3;
    andrea_head_score *h = &su->heads[5];
    h->ablation_ci_low = 0.25, h->ablation_ci_high = 0.75, h->ablation_pct = 97.5;
    h->restore_delta = 0.5, h->restore_ci_low = 0.25, h->restore_ci_high = NAN;
    h->evidence = ANDREA_EVIDENCE_PATTERN_ONLY;
    ae_error err = {{0}};
    CHECK_MSG(andrea_catalog_write(db, &a, NULL, &err) == 0, "%s", err.msg);
    andrea_analysis_free(&a);
    CHECK(q1(db, "SELECT count(*) FROM runs WHERE ablation = 'resample' AND ablation_note = 'no causal check for bos: "
                 "resample ablation needs 2 items, it has 1; no intervals or verdicts: test'") == 1);
    CHECK(q1(db, "SELECT count(*) FROM suites WHERE class = 'induction' AND group_size = 1 AND n_controls = 20 AND "
                 "group_delta = 0.5 AND group_ci_low = 0.25 AND control_q80 = 0.02 AND control_mad IS NULL AND "
                 "ablation_median = 0.002") == 1);
    CHECK(q1(db, "SELECT count(*) FROM suites WHERE class = 'bos' AND group_size IS NULL") == 1); /* not checked */
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE class = 'induction' AND layer * 3 + head = 5 AND "
                 "evidence = 'pattern_only' AND causal = 0 AND ablation = 'resample' AND ablation_ci_low = 0.25 AND "
                 "ablation_pct = 97.5 AND restore_delta = 0.5 AND restore_ci_high IS NULL") == 1);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE evidence IS NOT NULL") == 1);
}

/* A schema-2 catalog (before the evidence columns) gets them on its next write; its earlier run
 * keeps its rows, with NULL in the new columns, and readers take it afterwards. */
static void test_a_schema_2_catalog_gets_the_evidence_columns(void) {
    const char *db = tmp_path("schema2.db");
    andrea_analysis a;
    make_analysis(&a, "f", "/m/schema2.bin", "{}");
    ae_error err = {{0}};
    CHECK_MSG(andrea_catalog_write(db, &a, NULL, &err) == 0, "%s", err.msg);
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    const char *to_v2 =
        "DROP VIEW head_catalog; ALTER TABLE runs DROP COLUMN ablation;"
        "ALTER TABLE suites DROP COLUMN ablation_median; ALTER TABLE suites DROP COLUMN ablation_mad;"
        "ALTER TABLE suites DROP COLUMN group_size; ALTER TABLE suites DROP COLUMN n_controls;"
        "ALTER TABLE suites DROP COLUMN group_delta; ALTER TABLE suites DROP COLUMN group_ci_low;"
        "ALTER TABLE suites DROP COLUMN group_ci_high; ALTER TABLE suites DROP COLUMN control_median;"
        "ALTER TABLE suites DROP COLUMN control_mad; ALTER TABLE suites DROP COLUMN control_q80;"
        "ALTER TABLE suites DROP COLUMN control_max; ALTER TABLE head_scores DROP COLUMN ablation_ci_low;"
        "ALTER TABLE head_scores DROP COLUMN ablation_ci_high; ALTER TABLE head_scores DROP COLUMN ablation_pct;"
        "ALTER TABLE head_scores DROP COLUMN restore_delta; ALTER TABLE head_scores DROP COLUMN restore_ci_low;"
        "ALTER TABLE head_scores DROP COLUMN restore_ci_high; ALTER TABLE head_scores DROP COLUMN evidence;"
        "ALTER TABLE head_scores DROP COLUMN direct_delta; ALTER TABLE suites DROP COLUMN min_extra;"
        "ALTER TABLE suites DROP COLUMN max_extra; PRAGMA user_version = 2;";
    CHECK_MSG(sqlite3_exec(h, to_v2, NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(h));
    sqlite3_close(h);
    const char *out = tmp_path("schema2.out");
    const char *args[] = {"heads", "--db", db, NULL};
    CHECK(andrea_test_run_andrea(args, out) != 0); /* refused until written: older than this andrea's */
    andrea_analysis b;
    make_analysis(&b, "g", "/m/schema2b.bin", "{}");
    snprintf(b.ablation, sizeof b.ablation, "mean");
    CHECK_MSG(andrea_catalog_write(db, &b, NULL, &err) == 0, "%s", err.msg);
    andrea_analysis_free(&a);
    andrea_analysis_free(&b);
    CHECK(q1(db, "PRAGMA user_version") == ANDREA_CATALOG_SCHEMA_VERSION);
    CHECK(q1(db, "SELECT count(*) FROM runs") == 2);
    CHECK(q1(db, "SELECT count(*) FROM runs WHERE ablation IS NULL") == 1);
    CHECK(q1(db, "SELECT count(*) FROM suites WHERE min_extra IS NULL") == q1(db, "SELECT count(*) FROM suites") / 2);
    CHECK(q1(db, "SELECT count(*) FROM head_catalog WHERE evidence IS NULL AND restore_delta IS NULL") == 2 * 2 * L * H);
    const char *args2[] = {"heads", "--db", db, NULL};
    CHECK(andrea_test_run_andrea(args2, out) == 0);
}

/* A schema-3 catalog (before the rule's min_extra) gets the column on its next write, NULL in its
 * earlier runs, the rule's value in the new one. */
static void test_a_schema_3_catalog_gets_min_extra(void) {
    const char *db = tmp_path("schema3.db");
    andrea_analysis a;
    make_analysis(&a, "f", "/m/schema3.bin", "{}");
    ae_error err = {{0}};
    CHECK_MSG(andrea_catalog_write(db, &a, NULL, &err) == 0, "%s", err.msg);
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    const char *to_v3 = "DROP VIEW head_catalog; ALTER TABLE suites DROP COLUMN min_extra;"
                        "ALTER TABLE suites DROP COLUMN max_extra; PRAGMA user_version = 3;";
    CHECK_MSG(sqlite3_exec(h, to_v3, NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(h));
    sqlite3_close(h);
    const char *out = tmp_path("schema3.out");
    const char *args[] = {"heads", "--db", db, NULL};
    CHECK(andrea_test_run_andrea(args, out) != 0); /* refused until written: older than this andrea's */
    andrea_analysis b;
    make_analysis(&b, "g", "/m/schema3b.bin", "{}");
    for (int s = 0; s < b.n_suites; s++) b.suites[s].rule.min_extra = 0.75;
    CHECK_MSG(andrea_catalog_write(db, &b, NULL, &err) == 0, "%s", err.msg);
    CHECK(q1(db, "PRAGMA user_version") == ANDREA_CATALOG_SCHEMA_VERSION);
    CHECK(q1(db, "SELECT count(*) FROM suites WHERE min_extra IS NULL") == a.n_suites);
    CHECK(q1(db, "SELECT count(*) FROM suites WHERE min_extra = 0.75") == b.n_suites);
    andrea_analysis_free(&a);
    andrea_analysis_free(&b);
    CHECK(andrea_test_run_andrea(args, out) == 0);
}

/* A schema-4 catalog (before the rule's max_extra) gets the column on its next write, NULL in its
 * earlier runs, the rule's value in the new one. */
static void test_a_schema_4_catalog_gets_max_extra(void) {
    const char *db = tmp_path("schema4.db");
    andrea_analysis a;
    make_analysis(&a, "f", "/m/schema4.bin", "{}");
    ae_error err = {{0}};
    CHECK_MSG(andrea_catalog_write(db, &a, NULL, &err) == 0, "%s", err.msg);
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    const char *to_v4 = "DROP VIEW head_catalog; ALTER TABLE suites DROP COLUMN max_extra; PRAGMA user_version = 4;";
    CHECK_MSG(sqlite3_exec(h, to_v4, NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(h));
    sqlite3_close(h);
    const char *out = tmp_path("schema4.out");
    const char *args[] = {"heads", "--db", db, NULL};
    CHECK(andrea_test_run_andrea(args, out) != 0); /* refused until written: older than this andrea's */
    andrea_analysis b;
    make_analysis(&b, "g", "/m/schema4b.bin", "{}");
    for (int s = 0; s < b.n_suites; s++) b.suites[s].rule.max_extra = 0.25;
    CHECK_MSG(andrea_catalog_write(db, &b, NULL, &err) == 0, "%s", err.msg);
    CHECK(q1(db, "PRAGMA user_version") == ANDREA_CATALOG_SCHEMA_VERSION);
    CHECK(q1(db, "SELECT count(*) FROM suites WHERE max_extra IS NULL") == a.n_suites);
    CHECK(q1(db, "SELECT count(*) FROM suites WHERE max_extra = 0.25") == b.n_suites);
    andrea_analysis_free(&a);
    andrea_analysis_free(&b);
    CHECK(andrea_test_run_andrea(args, out) == 0);
}

/* A catalog whose view predates `causal` gets it on its next write (the view holds no data). */
static void test_a_catalog_with_an_older_view_gets_the_causal_column_on_its_next_write(void) {
    const char *db = tmp_path("oldview.db");
    andrea_analysis a;
    make_analysis(&a, "d", "/m/oldview.bin", "{}");
    ae_error err = {{0}};
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == 0);
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h, "DROP VIEW head_catalog; CREATE VIEW head_catalog AS SELECT 1 AS layer", NULL, NULL, NULL) ==
          SQLITE_OK);
    sqlite3_close(h);
    CHECK(q1(db, "SELECT count(*) FROM pragma_table_info('head_catalog') WHERE name = 'causal'") == 0);
    CHECK(andrea_catalog_write(db, &a, NULL, &err) == 0);
    andrea_analysis_free(&a);
    CHECK(q1(db, "SELECT count(*) FROM pragma_table_info('head_catalog') WHERE name = 'causal'") == 1);
}

static void test_heads_with_a_hostile_class_value_is_an_unknown_class(void) {
    const char *out = tmp_path("hostile.out");
    const char *args[] = {"heads", "--db", cli_db(), "--class", "x' OR 1=1 --", "--all", "--format", "json", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 2);
    CHECK(strcmp(slurp(out), "") == 0);
    /* The catalog is intact afterwards. */
    CHECK(q1(cli_db(), "SELECT count(*) FROM head_scores") == 2 * L * H);
}

static void test_heads_filters_by_layer_and_json_has_numbers(void) {
    const char *out = tmp_path("layer.out");
    const char *args[] = {"heads", "--db", cli_db(), "--all", "--layer", "0", "--class", "bos", "--format", "json", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 0);
    char *s = slurp(out);
    int n = 0;
    for (char *p = s; (p = strstr(p, "\"layer\":\t0")); p++) n++;
    CHECK_MSG(n == H, "%s", s);
    CHECK(strstr(s, "\"layer\":\t1") == NULL);
}

static void test_heads_on_a_missing_catalog_fails_without_creating_it(void) {
    const char *db = tmp_path("absent.db");
    const char *out = tmp_path("absent.out");
    const char *args[] = {"heads", "--db", db, NULL};
    CHECK(andrea_test_run_andrea(args, out) == 1);
    struct stat sb;
    CHECK(stat(db, &sb) != 0);
}

static void test_sql_answers_a_select(void) {
    const char *out = tmp_path("sel.out");
    const char *args[] = {"sql", cli_db(), "SELECT count(*) AS n FROM head_catalog WHERE label", "--format", "csv", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 0);
    CHECK(strcmp(slurp(out), "n\r\n1\r\n") == 0);
}

static void test_sql_options_after_the_statement_take_both_spellings(void) {
    const char *out = tmp_path("sel2.out");
    const char *args[] = {"sql", cli_db(), "SELECT 1 AS n", "--format=csv", "--timeout=5", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 0);
    CHECK(strcmp(slurp(out), "n\r\n1\r\n") == 0);
    const char *bad[] = {"sql", cli_db(), "SELECT 1", "--bogus", NULL};
    CHECK(andrea_test_run_andrea(bad, out) == 2);
    const char *novalue[] = {"sql", cli_db(), "SELECT 1", "--format", NULL};
    CHECK(andrea_test_run_andrea(novalue, out) == 2);
}

/* Table-valued functions read: json_each over the run's settings JSON, pragma_table_info (their
 * virtual tables declare themselves through an internal update of sqlite_master, which the
 * read-only guard let through for them only: UPDATE sqlite_master stays refused). */
static void test_sql_reads_table_valued_functions(void) {
    const char *out = tmp_path("tvf.out");
    const char *each[] = {"sql", cli_db(), "SELECT count(*) AS n FROM runs, json_each(json_set(runs.settings, '$.a', 1))",
                          "--format", "csv", NULL};
    CHECK(andrea_test_run_andrea(each, out) == 0);
    CHECK_MSG(strcmp(slurp(out), "n\r\n1\r\n") == 0, "%s", slurp(out));
    const char *info[] = {"sql", cli_db(), "SELECT name FROM pragma_table_info('runs') WHERE name = 'settings'", "--format", "csv", NULL};
    CHECK(andrea_test_run_andrea(info, out) == 0);
    CHECK_MSG(strcmp(slurp(out), "name\r\nsettings\r\n") == 0, "%s", slurp(out));
}

/* Each refused statement: exit 1 and the catalog unchanged. */
static void refused(const char *sql) {
    const char *out = tmp_path("refused.out");
    const char *args[] = {"sql", cli_db(), sql, NULL};
    int rc = andrea_test_run_andrea(args, out);
    CHECK_MSG(rc == 1, "sql accepted (rc %d): %s", rc, sql);
    CHECK(q1(cli_db(), "SELECT count(*) FROM head_scores") == 2 * L * H);
    CHECK(q1(cli_db(), "SELECT count(*) FROM pragma_table_list WHERE name = 'evil'") == 0);
}

static void test_sql_refuses_insert(void) { refused("INSERT INTO labels VALUES(1, 0, 0, 'bos', '{}')"); }
static void test_sql_refuses_drop(void) { refused("DROP TABLE labels"); }
static void test_sql_refuses_updating_the_schema(void) { refused("UPDATE sqlite_master SET sql = 'x'"); }
static void test_sql_refuses_delete(void) { refused("DELETE FROM head_scores"); }
static void test_sql_refuses_create(void) { refused("CREATE TABLE evil(x)"); }
static void test_sql_refuses_attach(void) {
    char sql[600];
    snprintf(sql, sizeof sql, "ATTACH '%s/attached.db' AS x", check_tmpdir());
    refused(sql);
    char p[600];
    snprintf(p, sizeof p, "%s/attached.db", check_tmpdir());
    struct stat sb;
    CHECK(stat(p, &sb) != 0);
}
static void test_sql_refuses_writable_schema_pragma(void) { refused("PRAGMA writable_schema=ON"); }
static void test_sql_refuses_journal_mode_pragma(void) { refused("PRAGMA journal_mode=DELETE"); }
static void test_sql_refuses_vacuum_into(void) {
    char sql[600];
    snprintf(sql, sizeof sql, "VACUUM INTO '%s/copy.db'", check_tmpdir());
    refused(sql);
    char p[600];
    snprintf(p, sizeof p, "%s/copy.db", check_tmpdir());
    struct stat sb;
    CHECK(stat(p, &sb) != 0);
}
static void test_sql_refuses_two_statements(void) { refused("SELECT 1; DELETE FROM head_scores"); }
static void test_sql_refuses_select_then_select(void) { refused("SELECT 1; SELECT 2"); }

static void test_sql_on_a_missing_catalog_fails_without_creating_it(void) {
    const char *db = tmp_path("nothere.db");
    const char *out = tmp_path("nothere.out");
    const char *args[] = {"sql", db, "SELECT 1", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 1);
    struct stat sb;
    CHECK(stat(db, &sb) != 0);
}

#define ENDLESS "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "

static void test_sql_endless_query_stops_at_its_time_limit(void) {
    const char *out = tmp_path("endless.out");
    const char *args[] = {"sql", cli_db(), ENDLESS "SELECT count(*) FROM c", "--timeout", "1", NULL};
    CHECK(andrea_test_run_andrea(args, out) == 1);
    CHECK(strcmp(slurp(out), "") == 0);
}

static void test_sql_result_over_the_memory_limit_is_refused(void) {
    catalog_limits lim = {0, 1 << 16};
    catalog_rows rows;
    ae_error err = {{0}};
    CHECK(andrea_catalog_sql(cli_db(), ENDLESS "SELECT x FROM c LIMIT 100", &lim, &rows, &err) == 0);
    CHECK(rows.n_rows == 100);
    andrea_catalog_rows_free(&rows);
    CHECK(andrea_catalog_sql(cli_db(), ENDLESS "SELECT x FROM c", &lim, &rows, &err) == -1);
    CHECK_MSG(strstr(err.msg, "result too large") != NULL, "%s", err.msg);
    CHECK(rows.n_rows == 0 && rows.cells == NULL); /* nothing half-collected is handed back */
}

/* rows written in FMT, as one string (static: one at a time) */
static const char *written(const catalog_rows *r, catalog_format fmt) {
    static char *s;
    size_t n = 0;
    ae_error err = {{0}};
    free(s);
    FILE *f = open_memstream(&s, &n);
    CHECK(f != NULL);
    CHECK(andrea_catalog_rows_write(f, r, fmt, &err) == 0);
    CHECK(fclose(f) == 0);
    return s;
}

static void test_sql_shows_a_blob_as_its_hex_literal_in_every_format(void) {
    catalog_rows rows;
    ae_error err = {{0}};
    CHECK(andrea_catalog_sql(cli_db(), "SELECT x'00ff0a22' AS b, x'' AS e", NULL, &rows, &err) == 0);
    CHECK(rows.n_rows == 1 && rows.cells[0] && !strcmp(rows.cells[0], "x'00ff0a22'"));
    CHECK(rows.cells[1] && !strcmp(rows.cells[1], "x''"));
    CHECK_MSG(strstr(written(&rows, CATALOG_JSON), "\"b\":\t\"x'00ff0a22'\"") != NULL, "%s", written(&rows, CATALOG_JSON));
    CHECK(strstr(written(&rows, CATALOG_CSV), "x'00ff0a22',x''\r\n") != NULL);
    CHECK(strstr(written(&rows, CATALOG_TABLE), "x'00ff0a22'  x''\n") != NULL);
    andrea_catalog_rows_free(&rows);
}

/* The blob's text (2 bytes a byte) counts against the limit: two blobs that fit as raw bytes
 * but not as text are refused. */
static void test_sql_counts_a_blob_by_its_text_against_the_limit(void) {
    catalog_limits lim = {0, 1 << 16};
    catalog_rows rows;
    ae_error err = {{0}};
    CHECK(andrea_catalog_sql(cli_db(), "SELECT zeroblob(30000) AS a", &lim, &rows, &err) == 0);
    CHECK(rows.n_rows == 1 && rows.cells[0] && strlen(rows.cells[0]) == 60003);
    andrea_catalog_rows_free(&rows);
    CHECK(andrea_catalog_sql(cli_db(), "SELECT zeroblob(30000) AS a, zeroblob(30000) AS b", &lim, &rows, &err) == -1);
    CHECK_MSG(strstr(err.msg, "result too large") != NULL, "%s", err.msg);
}

/* Two 900 MB blobs: refused in one line, without the process ever holding them. */
static void test_sql_refuses_a_huge_blob_without_holding_it(void) {
    struct rusage before, after;
    catalog_rows rows;
    ae_error err = {{0}};
    CHECK(getrusage(RUSAGE_SELF, &before) == 0);
    CHECK(andrea_catalog_sql(cli_db(), "SELECT zeroblob(900000000) AS a, zeroblob(900000000) AS b", NULL, &rows, &err) == -1);
    CHECK_MSG(strstr(err.msg, "result too large") != NULL && !strchr(err.msg, '\n'), "%s", err.msg);
    CHECK(getrusage(RUSAGE_SELF, &after) == 0);
    CHECK_MSG(after.ru_maxrss - before.ru_maxrss < 100 * 1024, "peak RSS rose by %ld KiB",
              after.ru_maxrss - before.ru_maxrss);
}

/* JSON objects with one key twice lose a column in most readers: later ones get _2, _3, ...,
 * skipping names that are columns already. */
static void test_json_gives_a_repeated_column_name_a_suffix(void) {
    catalog_rows rows;
    ae_error err = {{0}};
    CHECK(andrea_catalog_sql(cli_db(), "SELECT 1 AS x, 2 AS x, 3 AS x_2, 4 AS x", NULL, &rows, &err) == 0);
    const char *j = written(&rows, CATALOG_JSON);
    CHECK_MSG(strstr(j, "\"x\":\t1,") && strstr(j, "\"x_3\":\t2,") && strstr(j, "\"x_2\":\t3,") &&
                  strstr(j, "\"x_4\":\t4"), "%s", j);
    CHECK(strstr(written(&rows, CATALOG_CSV), "x,x,x_2,x\r\n") != NULL); /* other formats keep the names */
    andrea_catalog_rows_free(&rows);
}

static void test_heads_refuses_numbers_it_cannot_mean(void) {
    const char *out = tmp_path("absurd.out");
    const char *layer[] = {"heads", "--db", cli_db(), "--layer", "4294967299", NULL}; /* 3 mod 2^32 */
    CHECK(andrea_test_run_andrea(layer, out) == 2);
    const char *score[] = {"heads", "--db", cli_db(), "--min-score", "nan", NULL};
    CHECK(andrea_test_run_andrea(score, out) == 2);
    const char *timeout[] = {"heads", "--db", cli_db(), "--timeout", "-1", NULL};
    CHECK(andrea_test_run_andrea(timeout, out) == 2);
}

static void test_heads_on_a_file_that_is_not_a_catalog_fails(void) {
    const char *db = tmp_path("garbage.db");
    FILE *f = fopen(db, "wb");
    CHECK(f != NULL);
    char junk[4096];
    memset(junk, 0x5a, sizeof junk);
    memcpy(junk, "SQLite format 3", 16); /* the magic, then nonsense */
    CHECK(fwrite(junk, 1, sizeof junk, f) == sizeof junk);
    CHECK(fclose(f) == 0);
    const char *args[] = {"heads", "--db", db, NULL};
    CHECK(andrea_test_run_andrea(args, tmp_path("garbage.out")) == 1);
}

int main(void) {
    RUN(test_run_lands_in_the_head_catalog_view_with_its_label);
    RUN(test_causal_flag_is_set_above_the_mean_rise_and_null_when_not_measured);
    RUN(test_causal_evidence_is_stored_and_causal_follows_the_verdict);
    RUN(test_a_schema_2_catalog_gets_the_evidence_columns);
    RUN(test_a_schema_3_catalog_gets_min_extra);
    RUN(test_a_schema_4_catalog_gets_max_extra);
    RUN(test_a_catalog_with_an_older_view_gets_the_causal_column_on_its_next_write);
    RUN(test_another_applications_database_is_refused_and_left_unchanged);
    RUN(test_a_catalog_made_before_the_application_id_is_still_written);
    RUN(test_same_checkpoint_and_settings_replaces_its_run);
    RUN(test_many_checkpoints_share_one_catalog);
    RUN(test_a_second_shape_under_one_sha256_is_refused);
    RUN(test_write_all_stores_every_entry_or_none);
    RUN(test_step_is_parsed_from_common_file_names);
    RUN(test_step_written_in_another_notation_is_no_step);
    RUN(test_trainer_and_step_only_names_give_their_step);
    RUN(test_step_only_name_is_catalogued_with_its_run_folder);
    RUN(test_catalog_killed_mid_run_keeps_all_or_none_of_it);
    RUN(test_two_processes_writing_one_catalog_both_land);
    RUN(test_report_rows_through_a_shared_cache_equal_those_read_alone);
    if (!getenv("ANDREA_BIN")) {
        fprintf(stderr, "SKIP (CLI part): ANDREA_BIN not set\n");
        return check_summary("test_catalog");
    }
    RUN(test_heads_lists_the_labelled_head_by_default);
    RUN(test_heads_with_a_hostile_class_value_is_an_unknown_class);
    RUN(test_heads_filters_by_layer_and_json_has_numbers);
    RUN(test_heads_on_a_missing_catalog_fails_without_creating_it);
    RUN(test_sql_answers_a_select);
    RUN(test_sql_options_after_the_statement_take_both_spellings);
    RUN(test_sql_reads_table_valued_functions);
    RUN(test_sql_refuses_insert);
    RUN(test_sql_refuses_updating_the_schema);
    RUN(test_sql_refuses_drop);
    RUN(test_sql_refuses_delete);
    RUN(test_sql_refuses_create);
    RUN(test_sql_refuses_attach);
    RUN(test_sql_refuses_writable_schema_pragma);
    RUN(test_sql_refuses_journal_mode_pragma);
    RUN(test_sql_refuses_vacuum_into);
    RUN(test_sql_refuses_two_statements);
    RUN(test_sql_refuses_select_then_select);
    RUN(test_sql_on_a_missing_catalog_fails_without_creating_it);
    RUN(test_sql_endless_query_stops_at_its_time_limit);
    RUN(test_sql_result_over_the_memory_limit_is_refused);
    RUN(test_sql_shows_a_blob_as_its_hex_literal_in_every_format);
    RUN(test_sql_counts_a_blob_by_its_text_against_the_limit);
    RUN(test_sql_refuses_a_huge_blob_without_holding_it);
    RUN(test_json_gives_a_repeated_column_name_a_suffix);
    RUN(test_heads_refuses_numbers_it_cannot_mean);
    RUN(test_heads_on_a_file_that_is_not_a_catalog_fails);
    return check_summary("test_catalog");
}
