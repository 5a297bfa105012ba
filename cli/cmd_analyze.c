/* cmd_analyze.c — `andrea analyze [CKPT..]`: for each checkpoint dump (HDF5) + classify (catalog)
 * + render (heatmaps, index.html). Default: the bundled model into ./andrea-out/.
 * Wiring only: every step is a library call (dump/dump_write.h, analyzer/classify.h,
 * analyzer/catalog.h, reports/report.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analyzer/catalog.h"
#include "../analyzer/catalog_circuits.h"
#include "../analyzer/classify.h"
#include "../analyzer/summary.h"
#include "../common/progress.h"
#include "../engine/checkpoint.h"
#include "../dump/dump_write.h"
#include "../engine/model.h"
#include "../common/mpi_shard.h"
#include "../tokenizer/tokenizer.h"
#include "../probes/probe.h"
#include "../reports/report.h"
#include "analyze_series.h"
#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: andrea analyze [CKPT..] [--out DIR] [--probes SUITE[,SUITE..]|FILE.jsonl]\n"
            "                      [--device auto|cpu|cuda] [--maps fp16|fp32] [--step N]\n"
            "                      [--ablate-items N] [--rules FILE] [--precision tf32|tf32x3|fp32] [--quiet]\n\n"
            "For each checkpoint: dump the built-in probe suites (or --probes) to DIR/NAME.h5, classify\n"
            "the heads into DIR/catalog.db (scores, labels, causal check on --ablate-items items per\n"
            "suite, default %d), render the report (DIR/index.html) and print the labelled heads per\n"
            "class. Several checkpoints (a training run's steps) are one analysis: all are scored\n"
            "first, then each report is rendered into DIR/NAME/ with the whole series' step plots,\n"
            "then DIR/index.html shows the series (head x step matrix, formation plots) and a table\n"
            "of labelled heads per step is printed; progress lines name the checkpoint and k/N.\n"
            "Without CKPT it analyses the model bundled with andrea. DIR defaults to ./andrea-out.\n"
            "--precision: on a GPU, matmuls in TF32 (default, fast; attention probabilities of trained\n"
            "models within ~4e-3 of fp32), tf32x3 (every layer matmul and attention as three TF32\n"
            "products of high and low parts: maps within ~3e-5 of fp32, ~2.2x the forward time; the\n"
            "LM head and per-head W_O terms stay TF32) or fp32 (exact to ~1e-6, the slowest); the CPU\n"
            "is always fp32.\n",
            ANDREA_ABLATE_ITEMS_DEFAULT);
}

/* Suites for model m: a probe file (a path ending in .jsonl or naming a file), else a comma list
 * of built-in names (default: every built-in class). */
static int make_suites(const char *probes, const andrea_model *m, const andrea_tokenizer *tok, probe_suite **out,
                       int *n, ae_error *err) {
    struct stat sb;
    size_t len = probes ? strlen(probes) : 0;
    if (probes && ((len > 6 && !strcmp(probes + len - 6, ".jsonl")) || (stat(probes, &sb) == 0 && S_ISREG(sb.st_mode))))
        return probe_file_load(probes, tok, m->cfg.vocab_size, m->cfg.max_seq_len, out, n, err);
    if (!probes) /* every built-in class (probes/classes.c) */
        return probe_suites_builtin_list(NULL, tok, m->cfg.vocab_size, m->cfg.max_seq_len, NULL, out, n, err);
    char list[1024];
    snprintf(list, sizeof list, "%s", probes);
    int cap = 1;
    for (char *p = list; *p; p++) cap += *p == ',';
    probe_suite *s = calloc((size_t)cap, sizeof *s);
    if (!s) return ae_fail(err, "out of memory");
    int k = 0;
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (probe_suite_builtin(name, tok, m->cfg.vocab_size, m->cfg.max_seq_len, NULL, &s[k], err)) {
            for (int i = 0; i < k; i++) probe_suite_free(&s[i]);
            free(s);
            return -1;
        }
        k++;
    }
    if (k == 0) {
        free(s);
        return ae_fail(err, "--probes: no suite named");
    }
    *out = s;
    *n = k;
    return 0;
}

/* p relative to the working folder when it lies below it ("models/x.bin", not a machine path). */
static const char *shown_path(const char *p) {
    static char cwd[4096];
    if (p[0] != '/' || !getcwd(cwd, sizeof cwd)) return p;
    size_t n = strlen(cwd);
    return n > 1 && !strncmp(p, cwd, n) && p[n] == '/' ? p + n + 1 : p;
}

/* File-name stem of a checkpoint: "models/andrea-bundled.bin" -> "andrea-bundled". */
static void stem(const char *path, char *out, size_t cap) {
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/') b--;
    snprintf(out, cap, "%.*s", (int)(n - b), path + b);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

/* scored != NULL (a series): dump, classify and write the catalog only, and say where in *scored;
 * the series loop (analyze_series.c) renders once every checkpoint is scored. */
static int analyze_one(const char *ckpt, const char *dir, const char *report_dir, const char *probes,
                       const andrea_classify_options *copt, andrea_device dev, int maps_fp32, int index,
                       analyze_scored *scored, ae_error *err) {
    andrea_model m;
    memset(&m, 0, sizeof m);
    andrea_tokenizer *tok = NULL;
    probe_suite *suites = NULL;
    int n_suites = 0, ret = -1;
    andrea_analysis a;
    memset(&a, 0, sizeof a);
    char name[256], dump_path[4400], db_path[4400], hex[65];
    if (andrea_model_load(&m, ckpt, err)) return -1;
    tok = andrea_tokenizer_open(m.cfg.vocab_size, m.dir, NULL, err);
    if (!tok) goto out;
    if (make_suites(probes, &m, tok, &suites, &n_suites, err)) goto out;
    if (andrea_checkpoint_sha256(&m, hex, err)) goto out;
    stem(ckpt, name, sizeof name);
    if (index > 0) {
        size_t l = strlen(name);
        snprintf(name + l, sizeof name - l, "-%d", index + 1);
    }
    snprintf(dump_path, sizeof dump_path, "%s/%s.h5", dir, name);
    snprintf(db_path, sizeof db_path, "%s/catalog.db", dir);

    andrea_dump_options dopt;
    andrea_dump_options_init(&dopt);
    dopt.out_path = dump_path;
    dopt.device = dev;
    dopt.maps_fp32 = maps_fp32;
    dopt.contrib = ANDREA_CONTRIB_NORM;
    dopt.checkpoint_sha256 = hex;
    dopt.tokenizer = andrea_tokenizer_kind(tok);
    dopt.tok = tok; /* token_text + tokenizer_vocab_sha256 in the dump */
    if (andrea_dump_write(&m, suites, n_suites, &dopt, err)) goto out;

    andrea_classify_options o = *copt;
    o.device = dev;
    o.model = &m; /* the checkpoint just dumped: its sha256 is the dump's by construction */
    if (andrea_classify_dump(dump_path, &o, &a, err)) goto out;
    /* MPI: dump and statistics were shared by all ranks; rank 0 alone writes the catalog, renders
     * and prints (the others wait for its result, so a failure there stops every rank). */
    const int root = andrea_mpi_rank() == 0;
    if (!root) {
        ret = andrea_mpi_agree(0, err);
        goto out;
    }
    if (a.ablation_note[0]) fprintf(stderr, "andrea analyze: note: %s\n", a.ablation_note);
    if (scored) {
        snprintf(scored->name, sizeof scored->name, "%s", name);
        snprintf(scored->dump, sizeof scored->dump, "%s", dump_path);
        snprintf(scored->db, sizeof scored->db, "%s", db_path);
        snprintf(scored->sha256, sizeof scored->sha256, "%s", hex);
        ret = andrea_mpi_agree(catalog_write(db_path, &a, NULL, err) ||
                                   catalog_circuits_compute_and_write(db_path, &m, ckpt, hex, err), /* andrea circuits */
                               err);
        goto out;
    }
    /* One checkpoint: its report is DIR itself; several: DIR/NAME each. */
    char rdir[4400];
    if (report_dir) snprintf(rdir, sizeof rdir, "%s", report_dir);
    else snprintf(rdir, sizeof rdir, "%s/%s", dir, name);
    andrea_render_options ropt = {0};
    ropt.quiet = ae_progress_quiet;
    if (andrea_mpi_agree(catalog_write(db_path, &a, NULL, err) ||
                             catalog_circuits_compute_and_write(db_path, &m, ckpt, hex, err) || /* andrea circuits */
                             andrea_render(dump_path, db_path, rdir, &ropt, err),
                         err))
        goto out;
    printf("%s (%s)\n", shown_path(ckpt), dump_path);
    andrea_summary_write(stdout, &a);
    printf("catalog: %s\nreport:  %s/index.html\n\n", db_path, rdir);
    ret = 0;
out:
    andrea_analysis_free(&a);
    for (int i = 0; i < n_suites; i++) probe_suite_free(&suites[i]);
    free(suites);
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
    return ret;
}

typedef struct {
    const char *const *ckpts;
    const char *dir, *probes;
    const andrea_classify_options *o;
    andrea_device dev;
    int maps_fp32;
} series_job;

/* Checkpoint i of a series: its dump stem made unique as in the one-by-one loop below. */
static int score_one(int i, analyze_scored *out, void *ctx, ae_error *err) {
    const series_job *j = ctx;
    char si[256], sj[256];
    int index = 0;
    stem(j->ckpts[i], si, sizeof si);
    for (int k = 0; k < i; k++) {
        stem(j->ckpts[k], sj, sizeof sj);
        if (!strcmp(si, sj)) index++;
    }
    return analyze_one(j->ckpts[i], j->dir, NULL, j->probes, j->o, j->dev, j->maps_fp32, index, out, err);
}

int cmd_analyze(int argc, char **argv) {
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'},    {"probes", required_argument, 0, 'p'},
        {"device", required_argument, 0, 'D'}, {"maps", required_argument, 0, 'm'},
        {"step", required_argument, 0, 'S'},   {"ablate-items", required_argument, 0, 'a'},
        {"rules", required_argument, 0, 'r'},  {"quiet", no_argument, 0, 'q'},
        {"precision", required_argument, 0, 'P'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *dir = "andrea-out", *probes = NULL, *rules = NULL;
    andrea_device dev = ANDREA_DEVICE_AUTO;
    int maps_fp32 = 0, c, bad; /* bad: a parser's usage-error exit code */
    andrea_classify_options o;
    andrea_classify_options_init(&o);
    ae_error err = {{0}};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'o': dir = optarg; break;
        case 'p': probes = optarg; break;
        case 'D':
            if ((bad = cli_opt_device("analyze", optarg, &dev))) return bad;
            break;
        case 'm':
            if ((bad = cli_opt_maps("analyze", optarg, &maps_fp32))) return bad;
            break;
        case 'S':
            if ((bad = cli_opt_step("analyze", optarg, &o))) return bad;
            break;
        case 'a':
            if ((bad = cli_opt_ablate_items("analyze", optarg, &o))) return bad;
            break;
        case 'r': rules = optarg; break;
        case 'P':
            if ((bad = cli_opt_precision("analyze", optarg))) return bad;
            break;
        case 'q': ae_progress_quiet = 1; break;
        case 'h': help(stdout); return cli_stdout_done();
        default: return cli_option_error("analyze", c, argv, opts);
        }
    }
    if (o.has_step && argc - optind > 1)
        return cli_usage_error("analyze", "--step names the step of ONE checkpoint; several were given");
    if (rules && andrea_rules_load(&o.rules, rules, &err)) return cli_fail(&err);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        ae_fail(&err, "%s: %s", dir, strerror(errno));
        return cli_fail(&err);
    }
    char bundled_path[4096];
    const char *bundled[1] = {bundled_path};
    if (optind >= argc && cli_bundled_model_path(bundled_path, sizeof bundled_path, &err)) return cli_fail(&err);
    const char *const *ckpts = optind < argc ? (const char *const *)argv + optind : bundled;
    int n = optind < argc ? argc - optind : 1;
    if (n > 1) {
        series_job job = {ckpts, dir, probes, &o, dev, maps_fp32};
        if (analyze_series(n, ckpts, dir, score_one, &job, ae_progress_quiet, &err)) return cli_fail(&err);
        return cli_stdout_done();
    }
    for (int i = 0; i < n; i++) {
        /* Two checkpoints with one file name (run1/model.bin, run2/model.bin) get distinct dumps. */
        char si[256], sj[256];
        int index = 0;
        stem(ckpts[i], si, sizeof si);
        for (int j = 0; j < i; j++) {
            stem(ckpts[j], sj, sizeof sj);
            if (!strcmp(si, sj)) index++;
        }
        if (analyze_one(ckpts[i], dir, n == 1 ? dir : NULL, probes, &o, dev, maps_fp32, index, NULL, &err))
            return cli_fail(&err);
    }
    return cli_stdout_done();
}
