/* cmd_analyze.c — `andrea analyze [CKPT..]`: for each checkpoint dump (HDF5) + classify (catalog)
 * + render (heatmaps, index.html). Default: the bundled model into ./andrea-out/.
 * Wiring only: every step is a library call (dump/dump_write.h, analyzer/classify.h,
 * catalog/catalog.h, reports/report.h). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../catalog/catalog.h"
#include "../catalog/catalog_circuits.h"
#include "../analyzer/checkpoint_step.h"
#include "../analyzer/classify.h"
#include "../analyzer/head_scorer.h"
#include "../analyzer/summary.h"
#include "../common/progress.h"
#include "../engine/checkpoint.h"
#include "../dump/dump.h"
#include "../dump/dump_write.h"
#include "../engine/model.h"
#include "../common/mpi_shard.h"
#include "../tokenizer/tokenizer.h"
#include "../probes/probe.h"
#include "../reports/out_folder.h"
#include "../reports/report.h"
#include "../reports/report_collect.h"
#include "analyze_series.h"
#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: andrea analyze [CKPT..] [--out DIR] [--probes SUITE|FILE.jsonl[,..]].. [--texts FILE|-]\n"
            "                      [--n N] [--len T] [--seed S] [--tokenizer DIR] [--contrib none|norm|full]\n"
            "                      [--device auto|cpu|cuda] [--maps fp16|fp32] [--step N] [--dump FILE]\n"
            "                      [--keep-dumps] [--ablate-items N] [--ablation mean|resample|zero] [--rules FILE]\n"
            "                      [--precision tf32|tf32x3|fp32] [--report-maps N|all|labelled] [--timing] [--quiet]\n"
            "                      [--maps-only]\n\n"
            "For each checkpoint: run the built-in probe suites (or --probes) through the model and score\n"
            "every head while its attention maps are in memory, classify the heads into DIR/catalog.db\n"
            "(scores, labels, causal check on --ablate-items items per suite, default %d on a GPU, %d on\n"
            "the CPU, with --ablation, default mean: docs/scores.md), render the\n"
            "report (DIR/index.html; with several checkpoints DIR/NAME/index.html each) from the few\n"
            "example maps it shows, and print the labelled heads per class. No map file is written\n"
            "unless asked: --dump FILE writes every map of the (one) checkpoint to FILE, --keep-dumps\n"
            "writes DIR/NAME.h5 for each (both as `andrea dump` writes them; `andrea classify` of such a\n"
            "dump gives the same scores). Several checkpoints (a training run's steps) are one analysis:\n"
            "all are scored first, then each report is rendered into DIR/NAME/ with the whole series'\n"
            "step plots, then DIR/index.html shows the series (head x step matrix, formation plots) and\n"
            "a table of labelled heads per step is printed; progress lines name the checkpoint and k/N.\n"
            "A Trainer run's RUN/checkpoint-N folders (or step_N, iter_N files) are the series RUN, each\n"
            "at its step (trainer_state.json's global_step, else the name; docs/checkpoints.md).\n"
            "Without CKPT it analyses the model bundled with andrea. --quiet (-q): no progress, only the\n"
            "summary; -o is --out, -h --help.\n"
            "DIR defaults to ./andrea-out. --probes, --texts, --n, --len, --seed, --tokenizer: as for\n"
            "`andrea dump` (the probe suites; map-only suites, texts without targets, are not scored);\n"
            "--maps-only: no scoring, catalog or report: each checkpoint's maps go to DIR/NAME.h5 (or\n"
            "--dump FILE), as `andrea dump` writes them (for texts without targets).\n"
            "--contrib: the per-head W_O values computed (norm, default: head_dla and\n"
            "head_out_norm means in the catalog; none: without them; full: also head_out in a dump).\n"
            "--timing prints where the time went (forward, scoring, causal check, catalog, report).\n"
            "--report-maps N: heatmap PNGs per head and suite (default 1: the first example, for every\n"
            "head while heads x suites <= 1024, else for the labelled heads only; 0: none; all: every\n"
            "shown example; labelled: the labelled heads only). Each head page shows 2 examples per\n"
            "suite interactively (N if larger); the PNGs are their static, printable form\n"
            "(docs/report.md).\n"
            "--precision: on a GPU, matmuls in TF32 (default, fast; attention probabilities of trained\n"
            "models within ~4e-3 of fp32), tf32x3 (every layer matmul and attention as three TF32\n"
            "products of high and low parts: maps within ~3e-5 of fp32, ~2.2x the forward time; the\n"
            "LM head and per-head W_O terms stay TF32) or fp32 (exact to ~1e-6, the slowest); the CPU\n"
            "is always fp32.\n",
            ANDREA_ABLATE_ITEMS_GPU, ANDREA_ABLATE_ITEMS_CPU);
}

/* What analyze_one needs besides the checkpoint. */
typedef struct {
    const char *dir, *tok_dir, *dump_file;
    probe_sources *ps; /* --probes and --texts, their streams read once (andrea_probe_sources_keep) */
    const char *rules_file; /* --rules, an input a dump must not be renamed over */
    probe_options po;
    andrea_device dev;
    andrea_contrib contrib;
    int maps_fp32, keep_dumps, timing, maps_only;
    int report_maps; /* --report-maps: andrea_render_options.maps_per_suite */
} analyze_args;

/* File-name stem of a checkpoint: "models/andrea-bundled.bin" -> "andrea-bundled". */
static void stem(const char *path, char *out, size_t cap) {
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/') b--;
    snprintf(out, cap, "%.*s", (int)(n - b), path + b);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
    /* The stem names the checkpoint's report folder DIR/STEM (and DIR/STEM.h5): "..", "." or a
     * hidden name would put a report above DIR, into DIR itself or out of sight, and a name the
     * series page writes beside them (index.html, catalog.db, ...) would collide with it. */
    for (char *c = out; *c == '.'; c++) *c = '_';
    static const char *const taken[] = {"index.html", "explore.html", "compare.html", "catalog.db", "catalog.db-journal",
                                        "catalog.db-wal", "catalog.db-shm", "assets", "data", "heads", "maps",
                                        "overview", ""};
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++)
        if (!strcmp(out, taken[i])) {
            size_t l = strlen(out);
            snprintf(out + l, cap - l, "%sckpt", l ? "-" : "");
        }
}

/* The real path of p, also when its last components do not exist yet (DIR/data before the first
 * report): the longest existing prefix resolved, the rest appended as written. 0, or -1. */
static int real_path_of(const char *p, char *out, size_t cap) {
    char head[4096], real[PATH_MAX];
    snprintf(head, sizeof head, "%s", p);
    size_t n = strlen(head);
    while (n > 0) {
        if (realpath(head, real)) {
            const int w = snprintf(out, cap, "%s%s", real, p + n);
            return w < 0 || (size_t)w >= cap ? -1 : 0;
        }
        while (n > 0 && head[n - 1] != '/') n--; /* drop the last component */
        while (n > 1 && head[n - 1] == '/') n--;
        head[n] = 0;
    }
    return realpath(".", real) && snprintf(out, cap, "%s/%s", real, p) < (int)cap ? 0 : -1;
}

/* --dump FILE must not be one of the files analyze writes into DIR itself (the catalog, the
 * report's pages) nor lie in a folder of the report (data/, heads/, maps/, ...: cleared and
 * rewritten by every report): the dump would replace the catalog's runs, or the report the dump.
 * Compared by real paths, so any spelling of DIR counts. 0 or the usage-error code. */
static int check_dump_not_in_report(const char *dump, const char *dir) {
    /* the folder resolved, the name kept: renaming the dump over a symlink replaces the link */
    const char *slash0 = strrchr(dump, '/'), *base = slash0 ? slash0 + 1 : dump, *name;
    char parent[4096], d[PATH_MAX + 8], f[PATH_MAX + 4096];
    snprintf(parent, sizeof parent, "%.*s", slash0 ? (int)(slash0 - dump) + (slash0 == dump) : 1, slash0 ? dump : ".");
    if (!realpath(dir, d) || real_path_of(parent, f, sizeof f - strlen(base) - 2)) return 0;
    if (strcmp(f, "/")) strcat(f, "/");
    strcat(f, base);
    switch (andrea_out_folder_place(d, f, &name)) {
    case OUT_PLACE_CATALOG:
    case OUT_PLACE_PAGE:
        return cli_usage_error("analyze", "--dump %s is the %s analyze writes into %s: name the dump otherwise", dump,
                               strncmp(name, "catalog", 7) ? "report page" : "catalog", dir);
    case OUT_PLACE_FOLDER: /* a file there would stop the report from making its folder */
        return cli_usage_error("analyze", "--dump %s is the report's folder %s/%s: name the dump otherwise", dump, dir, name);
    case OUT_PLACE_IN_FOLDER:
        return cli_usage_error("analyze", "--dump %s lies in the report's folder %s/%s, which every report clears and "
                               "rewrites: name the dump otherwise", dump, dir, name);
    default:
        return 0;
    }
}

/* p relative to the working folder when it lies below it ("models/x.bin", not a machine path). */
static const char *shown_path(const char *p) {
    static char cwd[4096];
    if (p[0] != '/' || !getcwd(cwd, sizeof cwd)) return p;
    size_t n = strlen(cwd);
    return n > 1 && !strncmp(p, cwd, n) && p[n] == '/' ? p + n + 1 : p;
}

/* Where one checkpoint's time went (analyze --timing). t_rep: the report's stages
 * (andrea_render_options.stage_seconds). */
static void print_timing(const char *ckpt, const andrea_dump_stats *st, double t_load, double t_hash,
                         const andrea_classify_timing *ct, double t_catalog, double t_circuits, double t_report,
                         const double *t_rep, double t_all) {
    fprintf(stderr,
            "andrea analyze: time (%s): model load + probes %.2f s, checkpoint sha256 wait %.2f s (it runs beside the load and the forwards), engine open %.2f s, "
            "forwards %.2f s, scoring + report maps %.2f s, map writes %.2f s, causal check %.2f s (clean forwards %.2f s, "
            "replacement outputs %.2f s, direct effects %.2f s, %ld ablated sets in %ld forwards %.2f s), catalog %.2f s "
            "(circuit scores %.2f s), report %.2f s (heatmaps + thumbnails %.2f s, overviews %.2f s, interactive data "
            "%.2f s, head pages %.2f s, index %.2f s), total %.2f s\n",
            ckpt, t_load, t_hash, st->t_open, st->t_forward, st->t_sinks, st->t_maps + st->t_other + st->t_close + st->t_seal,
            ct->t_causal, ct->causal.t_clean, ct->causal.t_values, ct->causal.t_direct, ct->causal.units, ct->causal.forwards,
            ct->causal.t_ablated, t_catalog + t_circuits, t_circuits, t_report, t_rep[0], t_rep[1], t_rep[2], t_rep[3], t_rep[4],
            t_all);
}

/* The run's name (the checkpoint's stem, "-N" after the first of a list) and its dump's path. */
static void run_name_and_dump(const char *ckpt, int index, const analyze_args *aa, char *name, size_t name_cap,
                              char *dump_path, size_t dump_cap) {
    stem(ckpt, name, name_cap);
    if (index > 0) {
        size_t l = strlen(name);
        snprintf(name + l, name_cap - l, "-%d", index + 1);
    }
    if (aa->dump_file) snprintf(dump_path, dump_cap, "%s", aa->dump_file);
    else snprintf(dump_path, dump_cap, "%s/%s.h5", aa->dir, name);
}

/* The catalog rows of one checkpoint handed to the series loop instead of written (a is emptied). */
/* The run and the checkpoint's circuit scores (andrea circuits), computed first, in one
 * transaction: a failure leaves no part of them in the catalog. *t_circuits (may be NULL): the
 * seconds the circuit scores took to compute. */
static int write_catalog(const char *db_path, const andrea_analysis *a, const andrea_model *m, andrea_device dev,
                         const char *ckpt, const char *hex, double *t_circuits, ae_error *err) {
    andrea_circuits c;
    const double t0 = andrea_now_seconds();
    if (andrea_circuits_compute_on(m, dev, &c, err)) return -1;
    if (t_circuits) *t_circuits = andrea_now_seconds() - t0;
    andrea_catalog_entry e = {.analysis = a, .circuits = &c, .ckpt_path = ckpt, .sha256 = hex};
    const int rc = andrea_catalog_write_all(db_path, &e, 1, err);
    andrea_circuits_free(&c);
    cli_note_catalog_entries("analyze", &e, rc ? 0 : 1);
    return rc;
}

static int defer_catalog(analyze_scored *scored, andrea_analysis *a, const andrea_model *m, andrea_device dev,
                         ae_error *err) {
    if (!(scored->analysis = calloc(1, sizeof *scored->analysis)) || !(scored->circuits = calloc(1, sizeof *scored->circuits)))
        return andrea_fail(err, "%s: out of memory", m->path);
    *scored->analysis = *a;
    memset(a, 0, sizeof *a);
    return andrea_circuits_compute_on(m, dev, scored->circuits, err); /* andrea circuits */
}

/* The forward loop's options for analyze: the scorer and report sinks, and the dump writer when
 * dump_path is set (hex: the checkpoint's sha256 the dump records; unused without a dump). */
static void forward_options(andrea_dump_options *dopt, const analyze_args *aa, const andrea_classify_options *copt,
                            const char *dump_path, const char *hex, const andrea_tokenizer *tok, const char *tok_desc,
                            andrea_batch_sink *sinks, andrea_dump_stats *stats) {
    andrea_dump_options_init(dopt);
    dopt->out_path = dump_path;
    dopt->device = aa->dev;
    dopt->precision = copt->precision;
    dopt->maps_fp32 = aa->maps_fp32;
    dopt->contrib = aa->contrib;
    dopt->checkpoint_sha256 = dump_path ? hex : NULL;
    dopt->tokenizer = tok_desc;
    dopt->tok = tok; /* token_text + tokenizer_vocab_sha256 in a dump */
    dopt->progress_label = "forward";
    dopt->sinks = sinks;
    dopt->n_sinks = aa->maps_only ? 0 : 2; /* --maps-only: the dump alone */
    dopt->stats = stats;
}

/* scored != NULL (a series): score, classify and write the catalog only, and hand the report's
 * collected maps over in *scored; the series loop (analyze_series.c) renders once every
 * checkpoint is scored. */
/* The --probes / --texts suites for model m, whose tokenizer tok is (NULL: it failed to open, err
 * says why). */
static int load_probes(const analyze_args *aa, const andrea_tokenizer *tok, const andrea_model *m,
                       probe_suite **suites, int *n_suites, ae_error *err) {
    const andrea_config *cfg = &m->cfg;
    /* token-id probe files work without a tokenizer, when the model has none at all */
    if (!tok && !(andrea_probe_sources_files_only(aa->ps) && andrea_tokenizer_absent(cfg->vocab_size, m->dir, aa->tok_dir)))
        return -1;
    if (andrea_probe_sources_load(aa->ps, tok, cfg->vocab_size, cfg->max_seq_len, &aa->po, suites, n_suites, err)) return -1;
    int scored = aa->maps_only; /* refused before the forwards: nothing would be scored */
    for (int s = 0; s < *n_suites; s++) scored += !(*suites)[s].map_only;
    return scored ? 0 : andrea_fail(err, "every suite is map-only (texts without targets): nothing to score; "
                                         "--maps-only writes their maps (or andrea dump)");
}

/* The dump a run writes must not be one of the files it reads (checkpoint, probes, tokenizer,
 * rules file). */
static int check_dump_target(const char *dump_path, const andrea_model *m, const analyze_args *aa, ae_error *err) {
    if (cli_check_output_not_input(dump_path, m, aa->ps, aa->tok_dir, err)) return -1;
    if (aa->rules_file && cli_same_file(dump_path, aa->rules_file))
        return andrea_fail(err, "%s: is the rules file this command reads; give another output path", dump_path);
    return 0;
}

/* The notes of a scored run: why the causal check did not run, the map-only suites left out,
 * --rules naming no suite of the run; unless quiet, intervals left out for too few items. */
static void print_notes(const andrea_analysis *a, const andrea_rules *rules, int quiet) {
    char shown[sizeof a->ablation_note];
    if (a->ablation_note[0]) fprintf(stderr, "andrea analyze: note: %s\n", cli_shown(a->ablation_note, shown, sizeof shown));
    if (a->interval_note[0] && !quiet) fprintf(stderr, "andrea analyze: note: %s\n", a->interval_note);
    if (a->skipped_note[0]) fprintf(stderr, "andrea analyze: note: %s\n", cli_shown(a->skipped_note, shown, sizeof shown));
    cli_note_unused_rules("analyze", rules, a);
}

/* --maps-only: the line a checkpoint's dump gets instead of the summary; 0. */
static int print_maps_only(const char *ckpt, int n_suites, const char *dump_path) {
    char s_ck[4200], s_dump[4400];
    printf("%s: maps of %d suite%s in %s\n", cli_shown(shown_path(ckpt), s_ck, sizeof s_ck), n_suites,
           n_suites == 1 ? "" : "s", cli_shown(dump_path, s_dump, sizeof s_dump));
    return 0;
}

static int analyze_one(const char *ckpt, const char *report_dir, const analyze_args *aa,
                       const andrea_classify_options *copt, int index, analyze_scored *scored, ae_error *err) {
    const double t_start = andrea_now_seconds();
    andrea_model m = {0};
    andrea_tokenizer *tok = NULL;
    probe_suite *suites = NULL;
    head_scorer *hs = NULL;
    report_collector *rcol = NULL;
    andrea_engine *eng = NULL;
    int n_suites = 0, ret = -1;
    andrea_analysis a = {0};
    char name[256], dump_path[4400], db_path[4400], hex[65], tok_desc[4200];
    if (andrea_model_load(&m, ckpt, err)) return -1;
    tok = andrea_tokenizer_open(m.cfg.vocab_size, m.dir, aa->tok_dir, err);
    if (load_probes(aa, tok, &m, &suites, &n_suites, err)) goto out;
    snprintf(tok_desc, sizeof tok_desc, "%s", tok ? andrea_tokenizer_kind(tok) : "none");
    const double t_load = andrea_now_seconds() - t_start;
    run_name_and_dump(ckpt, index, aa, name, sizeof name, dump_path, sizeof dump_path);
    const int dumping = aa->dump_file || aa->keep_dumps || aa->maps_only;
    if (dumping && check_dump_target(dump_path, &m, aa, err)) goto out;
    if (dumping && andrea_checkpoint_sha256(&m, hex, err)) goto out; /* the dump file records it */
    snprintf(db_path, sizeof db_path, "%s/catalog.db", aa->dir);

    /* The forwards feed the head scorer and the report's example maps (and the dump writer when
     * a dump was asked for): one loop, dump/dump_write.h. */
    if (!(hs = andrea_head_scorer_open(&m.cfg, &copt->rules, n_suites, err))) goto out;
    andrea_render_options ropt = {0};
    ropt.quiet = andrea_progress_quiet;
    ropt.maps_per_suite = aa->report_maps;
    if (!(rcol = andrea_report_collector_open(&m, n_suites, andrea_render_examples(&ropt), err))) goto out;
    andrea_batch_sink sinks[2] = {andrea_head_scorer_sink(hs), andrea_report_collector_sink(rcol)};
    andrea_dump_stats stats;
    memset(&stats, 0, sizeof stats);
    andrea_dump_options dopt;
    forward_options(&dopt, aa, copt, dumping ? dump_path : NULL, hex, tok, tok_desc, sinks, &stats);
    dopt.keep_engine = &eng;
    if (andrea_dump_write(&m, suites, n_suites, &dopt, err)) goto out;
    if (aa->maps_only) {
        ret = print_maps_only(ckpt, n_suites, dump_path);
        goto out;
    }
    /* without a dump nothing needed the sha256 so far: its thread (started with the load,
     * engine/checkpoint_hash.h) ran beside the engine open and the forwards; its rest is waited for here */
    const double t_hash0 = andrea_now_seconds();
    if (!dumping && andrea_checkpoint_sha256(&m, hex, err)) goto out;
    const double t_hash = andrea_now_seconds() - t_hash0;
    andrea_mpi_serial_phase(1); /* MPI: rank 0's causal check, catalog, report; the others wait */
    /* too small for the causal check's batch, or (MPI, CPU) sized for a rank's share of the cores
     * while rank 0 now has the node's: a fresh one */
    if (stats.batch < andrea_ablate_items(copt, eng && andrea_engine_has_gpu(eng)) || (andrea_mpi_parallel() && eng && !andrea_engine_has_gpu(eng))) {
        andrea_engine_close(eng);
        eng = NULL;
    }
    andrea_classify_timing ct = {0};
    andrea_classify_options o = *copt;
    o.device = aa->dev;
    o.timing = &ct;
    if (andrea_classify_scored(&m, hex, suites, n_suites, hs, eng, dumping ? dump_path : NULL,
                               aa->maps_fp32 ? "fp32" : "fp16", &o, &a, err))
        goto out;
    if (dumping) /* the run records its dump's seal, so `render DUMP` finds this run */
        snprintf(a.dump_seal, sizeof a.dump_seal, "%s", stats.seal);
    /* MPI: the statistics were pooled on all ranks; rank 0 alone writes the catalog, renders and
     * prints (the others wait for its result, so a failure there stops every rank). */
    if (andrea_mpi_rank() != 0) {
        ret = andrea_mpi_agree(0, err);
        goto out;
    }
    print_notes(&a, &copt->rules, andrea_progress_quiet);
    if (scored) {
        snprintf(scored->name, sizeof scored->name, "%s", name);
        snprintf(scored->dump, sizeof scored->dump, "%s", dumping ? dump_path : "");
        snprintf(scored->db, sizeof scored->db, "%s", db_path);
        snprintf(scored->sha256, sizeof scored->sha256, "%s", hex);
        snprintf(scored->maps_dtype, sizeof scored->maps_dtype, "%s", a.maps_dtype);
        scored->collected = rcol; /* rendered and freed by the series loop */
        rcol = NULL;
        if (scored->defer_catalog) { /* a series: its loop writes the rows once every checkpoint scored */
            ret = andrea_mpi_agree(defer_catalog(scored, &a, &m, aa->dev, err), err); /* the other ranks wait on it */
            goto out;
        }
        ret = andrea_mpi_agree(write_catalog(db_path, &a, &m, aa->dev, ckpt, hex, NULL, err), err);
        goto out;
    }
    /* One checkpoint: its report is DIR itself; several: DIR/NAME each. */
    char rdir[4400];
    if (report_dir) snprintf(rdir, sizeof rdir, "%s", report_dir);
    else snprintf(rdir, sizeof rdir, "%s/%s", aa->dir, name);
    const double t_cat0 = andrea_now_seconds();
    double t_circ = 0;
    int wrc = write_catalog(db_path, &a, &m, aa->dev, ckpt, hex, &t_circ, err);
    const double t_rep0 = andrea_now_seconds();
    double t_rep[ANDREA_REPORT_STAGES] = {0};
    ropt.stage_seconds = t_rep;
    if (!wrc)
        wrc = andrea_render_collected(rcol, hex, dumping ? dump_path : NULL, a.maps_dtype, db_path, rdir, &ropt, err);
    const double t_end = andrea_now_seconds();
    if (andrea_mpi_agree(wrc, err)) goto out;
    char s_ck[4200], s_dump[4200], s_db[4200], s_rdir[4400];
    printf("%s%s%s%s\n", cli_shown(shown_path(ckpt), s_ck, sizeof s_ck), dumping ? " (" : "",
           dumping ? cli_shown(dump_path, s_dump, sizeof s_dump) : "", dumping ? ")" : "");
    andrea_summary_write(stdout, &a);
    printf("catalog: %s\nreport:  %s/index.html\n\n", cli_shown(db_path, s_db, sizeof s_db),
           cli_shown(rdir, s_rdir, sizeof s_rdir));
    if (aa->timing)
        print_timing(ckpt, &stats, t_load, t_hash, &ct, t_rep0 - t_cat0 - t_circ, t_circ, t_end - t_rep0, t_rep,
                     t_end - t_start);
    ret = 0;
out:
    andrea_mpi_serial_phase(0);
    andrea_analysis_free(&a);
    andrea_engine_close(eng);
    andrea_head_scorer_free(hs);
    andrea_report_collector_free(rcol);
    andrea_probe_suites_free(suites, n_suites);
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
    return ret;
}

typedef struct {
    const char *const *ckpts;
    const analyze_args *aa;
    const andrea_classify_options *o;
    const int *index; /* [n] the suffix each checkpoint's run name takes (run_name_and_dump) */
} series_job;

/* Checkpoint i of a series, under its unique name. */
static int score_one(int i, analyze_scored *out, void *ctx, ae_error *err) {
    const series_job *j = ctx;
    return analyze_one(j->ckpts[i], NULL, j->aa, j->o, j->index[i], out, err);
}

/* Suffixes that make the n run names (the reports' folders DIR/NAME) unique: checkpoint i takes
 * its stem, or STEM-k with the smallest k >= 2 no earlier name has (p/m.bin, q/m-2.bin, r/m.bin
 * are m, m-2, m-3: two of them in one folder would write over each other, and under MPI two ranks
 * waited on one folder's lock forever). index: [n]; -1 when out of memory. */
static int unique_names(const char *const *ckpts, int n, int *index) {
    char (*names)[300] = malloc(sizeof *names * (size_t)(n > 0 ? n : 1));
    if (!names) return -1;
    for (int i = 0; i < n; i++) {
        char base[256];
        stem(ckpts[i], base, sizeof base);
        for (int k = 0;; k++) {
            if (k == 0) snprintf(names[i], sizeof names[i], "%s", base);
            else snprintf(names[i], sizeof names[i], "%s-%d", base, k + 1);
            int taken = 0;
            for (int j = 0; j < i && !taken; j++) taken = !strcmp(names[i], names[j]);
            if (!taken) {
                index[i] = k;
                break;
            }
        }
    }
    free(names);
    return 0;
}

/* Two of the n checkpoints that are one file (given twice, a link, an overlapping glob): refused
 * before any work, which the series' sha256 check (analyze_series.c) would only find after
 * scoring the first of them. Paths that cannot be stat'ed are left to the load's error. 0, or the
 * usage-error code. */
static int check_no_file_twice(const char *const *ckpts, int n) {
    struct stat *st = calloc((size_t)n, sizeof *st);
    char *ok = calloc((size_t)n, 1);
    int ret = 0;
    for (int i = 0; st && ok && i < n && !ret; i++) {
        ok[i] = stat(ckpts[i], &st[i]) == 0;
        for (int j = 0; j < i && ok[i] && !ret; j++)
            if (ok[j] && st[j].st_dev == st[i].st_dev && st[j].st_ino == st[i].st_ino) {
                char a[4200], b[4200];
                ret = cli_usage_error("analyze", "%s and %s are the same checkpoint file: give each once",
                                      cli_shown(ckpts[j], a, sizeof a), cli_shown(ckpts[i], b, sizeof b));
            }
    }
    free(st);
    free(ok);
    return ret;
}

/* The report folders DIR/NAME of a series' n checkpoints (their names as run_name_and_dump
 * gives them) must each be a folder of its own in DIR, not a link (out_folder.h): refused before
 * any work. 0, or -1 with err. */
static int check_series_folders(const analyze_args *aa, const char *const *ckpts, int n, const int *index, ae_error *err) {
    char (*names)[256] = malloc(sizeof *names * (size_t)n), dump[4400];
    const char **p = malloc(sizeof *p * (size_t)n);
    int rc = !names || !p ? andrea_fail(err, "analyze: out of memory") : 0;
    for (int i = 0; i < n && !rc; i++) {
        run_name_and_dump(ckpts[i], index[i], aa, names[i], sizeof names[i], dump, sizeof dump);
        p[i] = names[i];
    }
    if (!rc) rc = andrea_out_folder_check_series(aa->dir, p, n, err);
    free(names);
    free(p);
    return rc;
}

/* The step of each checkpoint (analyzer/checkpoint_step.h), before any work: a trainer_state.json
 * the catalog write would refuse after the forwards is refused now, and a global_step that differs
 * from the step of the checkpoint's name is said once, in a note line. Not read under --step N.
 * 0, or -1 with err. */
static int check_steps(const char *const *ckpts, int n, const andrea_classify_options *o, ae_error *err) {
    for (int i = 0; i < n && !o->has_step; i++) {
        long long step;
        char note[4400], shown[4400];
        if (andrea_checkpoint_step(ckpts[i], &step, note, sizeof note, err) < 0) return -1;
        if (note[0] && andrea_mpi_rank() == 0) fprintf(stderr, "andrea analyze: note: %s\n", cli_shown(note, shown, sizeof shown));
    }
    return 0;
}

/* analyze's work once DIR exists, for the n checkpoints given (0: the bundled model): the exit
 * status. */
static int analyze_into(analyze_args *aa, const andrea_classify_options *o, const char *const *given, int n) {
    ae_error err = {{0}};
    int bad_dump = aa->dump_file ? check_dump_not_in_report(aa->dump_file, aa->dir) : 0;
    if (bad_dump) return bad_dump;
    const int twice = n > 1 ? check_no_file_twice(given, n) : 0;
    if (twice) return twice;
    /* one writer of DIR at a time (MPI: rank 0 writes it); then, before any work: a `show` page
     * there would be replaced (the report checks again itself) */
    if (andrea_mpi_rank() == 0) andrea_out_folder_lock(aa->dir, "analyze", andrea_progress_quiet);
    if (!aa->maps_only && andrea_out_folder_check(aa->dir, n > 1 ? OUT_FOLDER_SERIES : OUT_FOLDER_REPORT, &err))
        return cli_fail(&err);
    char db_path[4200];
    snprintf(db_path, sizeof db_path, "%s/catalog.db", aa->dir);
    if (!aa->maps_only && andrea_catalog_check_writable(db_path, &err)) return cli_fail(&err); /* before the work */
    /* streams (--texts -, --probes <(cmd)) can be read once: every checkpoint reads their bytes */
    if (andrea_probe_sources_keep(aa->ps, n > 1, &err)) return cli_fail(&err);
    char bundled_path[4096];
    const char *bundled[1] = {bundled_path};
    if (n <= 0 && cli_bundled_model_path(bundled_path, sizeof bundled_path, &err)) return cli_fail(&err);
    const char *const *ckpts = n > 0 ? given : bundled;
    if (n <= 0) n = 1;
    if (check_steps(ckpts, n, o, &err)) return cli_fail(&err);
    if (n == 1) { /* one checkpoint: its report is DIR itself */
        if (analyze_one(ckpts[0], aa->dir, aa, o, 0, NULL, &err)) return cli_fail(&err);
        return cli_stdout_done();
    }
    int *index = malloc(sizeof *index * (size_t)n);
    if (!index || unique_names(ckpts, n, index)) {
        free(index);
        andrea_fail(&err, "analyze: out of memory");
        return cli_fail(&err);
    }
    /* where each checkpoint's report goes: no link, no folder twice (before any work) */
    if (check_series_folders(aa, ckpts, n, index, &err)) {
        free(index);
        return cli_fail(&err);
    }
    series_job job = {ckpts, aa, o, index};
    for (int i = 0; aa->maps_only && i < n; i++) /* no scores: no series page either */
        if (analyze_one(ckpts[i], NULL, aa, o, index[i], NULL, &err)) {
            free(index);
            return cli_fail(&err);
        }
    if (aa->maps_only) {
        free(index);
        return cli_stdout_done();
    }
    andrea_render_options sro = {0};
    sro.quiet = andrea_progress_quiet;
    sro.maps_per_suite = aa->report_maps;
    const int rc = analyze_series(n, ckpts, aa->dir, score_one, &job, &sro, &err);
    free(index);
    return rc ? cli_fail(&err) : cli_stdout_done();
}

int cmd_analyze(int argc, char **argv) {
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'},       {"probes", required_argument, 0, 'p'},
        {"device", required_argument, 0, 'D'},    {"maps", required_argument, 0, 'm'},
        {"step", required_argument, 0, 'S'},      {"ablate-items", required_argument, 0, 'a'},
        {"ablation", required_argument, 0, 'A'},
        {"rules", required_argument, 0, 'r'},     {"quiet", no_argument, 0, 'q'},
        {"precision", required_argument, 0, 'P'}, {"help", no_argument, 0, 'h'},
        {"n", required_argument, 0, 'n'},         {"len", required_argument, 0, 'l'},
        {"seed", required_argument, 0, 's'},      {"contrib", required_argument, 0, 'c'},
        {"tokenizer", required_argument, 0, 'k'}, {"dump", required_argument, 0, 'U'},
        {"keep-dumps", no_argument, 0, 'K'},      {"timing", no_argument, 0, 't'},
        {"report-maps", required_argument, 0, 'R'}, {"texts", required_argument, 0, 'T'},
        {"maps-only", no_argument, 0, 'M'},       {0, 0, 0, 0},
    };
    analyze_args aa;
    memset(&aa, 0, sizeof aa);
    static probe_sources ps; /* static: reachable until exit, whichever return ends the command */
    andrea_probe_sources_init(&ps);
    aa.ps = &ps;
    aa.dir = "andrea-out";
    aa.dev = ANDREA_DEVICE_AUTO;
    aa.contrib = ANDREA_CONTRIB_NORM;
    const char *rules = NULL;
    int c, bad; /* bad: a parser's usage-error exit code */
    andrea_classify_options o;
    andrea_classify_options_init(&o);
    ae_error err = {{0}};
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":o:qh", opts)) != -1) {
        switch (c) {
        case 'o': aa.dir = optarg; break;
        case 'p':
            if ((bad = cli_opt_probes("analyze", optarg, aa.ps))) return bad;
            break;
        case 'T':
            if ((bad = cli_opt_texts("analyze", optarg, aa.ps))) return bad;
            break;
        case 'M': aa.maps_only = 1; break;
        case 'D':
            if ((bad = cli_opt_device("analyze", optarg, &aa.dev))) return bad;
            break;
        case 'm':
            if ((bad = cli_opt_maps("analyze", optarg, &aa.maps_fp32))) return bad;
            break;
        case 'S':
            if ((bad = cli_opt_step("analyze", optarg, &o))) return bad;
            break;
        case 'a':
            if ((bad = cli_opt_ablate_items("analyze", optarg, &o))) return bad;
            break;
        case 'A':
            if ((bad = cli_opt_ablation("analyze", optarg, &o))) return bad;
            break;
        case 'r': rules = optarg; break;
        case 'P':
            if ((bad = cli_opt_precision("analyze", optarg, &o.precision))) return bad;
            break;
        case 'n':
        case 'l':
        case 's':
            if ((bad = cli_opt_probe("analyze", c, optarg, &aa.po))) return bad;
            break;
        case 'c':
            if ((bad = cli_opt_contrib("analyze", optarg, &aa.contrib))) return bad;
            break;
        case 'k': aa.tok_dir = optarg; break;
        case 'U': aa.dump_file = optarg; break;
        case 'K': aa.keep_dumps = 1; break;
        case 't': aa.timing = 1; break;
        case 'R':
            if ((bad = cli_opt_report_maps("analyze", optarg, &aa.report_maps))) return bad;
            break;
        case 'q': andrea_progress_quiet = 1; break;
        case 'h': help(stdout); return cli_stdout_done();
        default: return cli_option_error("analyze", c, argv, opts);
        }
    }
    if (o.has_step && argc - optind > 1)
        return cli_usage_error("analyze", "--step names the step of ONE checkpoint; several were given");
    if (aa.dump_file && argc - optind > 1)
        return cli_usage_error("analyze", "--dump FILE names the dump of ONE checkpoint; for several use --keep-dumps");
    if (aa.dump_file && !aa.dump_file[0]) return cli_usage_error("analyze", "--dump wants a file name, not ''");
    if (aa.dump_file && aa.keep_dumps)
        return cli_usage_error("analyze", "--dump FILE and --keep-dumps both name where the dump goes: give one");
    struct stat dst;
    if (aa.dump_file && stat(aa.dump_file, &dst) == 0 && S_ISDIR(dst.st_mode)) /* before DIR is made */
        return cli_usage_error("analyze", "--dump names the dump file to write; '%s' is a folder", aa.dump_file);
    if (rules && andrea_rules_load(&o.rules, rules, &err)) return cli_fail(&err);
    aa.rules_file = rules;
    if (!aa.dir[0]) return cli_usage_error("analyze", "--out wants a folder name, not ''");
    const int made = mkdir(aa.dir, 0777) == 0;
    if (!made && errno != EEXIST) {
        andrea_fail(&err, "%s: cannot make the output folder: %s", aa.dir, strerror(errno));
        return cli_fail(&err);
    }
    struct stat dirst;
    if (!made && (stat(aa.dir, &dirst) != 0 || !S_ISDIR(dirst.st_mode))) {
        andrea_fail(&err, "%s: not a folder: --out names the folder of the report and catalog", aa.dir);
        return cli_fail(&err);
    }
    const int rc = analyze_into(&aa, &o, (const char *const *)argv + optind, argc - optind);
    andrea_probe_sources_free(aa.ps);
    /* a run that failed before writing anything leaves no empty folder of its own making */
    if (rc != 0 && made) rmdir(aa.dir);
    return rc;
}
