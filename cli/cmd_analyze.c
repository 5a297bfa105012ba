/* cmd_analyze.c — `andrea analyze [CKPT..]`: argv into one plan (pipeline/analyze.h), its paths
 * checked, then one call to andrea_analyze; cli/analyze_print.c prints the results. Default: the
 * bundled model into ./andrea-out/. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/progress.h"
#include "../pipeline/analyze.h"
#include "../reports/out_folder.h"
#include "analyze_paths.h"
#include "analyze_print.h"
#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: andrea analyze [CKPT..] [--out DIR] [--probes SUITE|FILE.jsonl[,..]].. [--texts FILE|-]\n"
            "                      [--n N] [--len T] [--seed S] [--tokenizer DIR] [--contrib none|norm|full]\n"
            "                      [--device auto|cpu|cuda] [--maps fp16|fp32] [--step N] [--dump FILE]\n"
            "                      [--keep-dumps] [--ablate-items N] [--ablation mean|resample|zero] [--rules FILE]\n"
            "                      [--precision tf32|tf32x3|fp32] [--report small|full]\n"
            "                      [--report-maps N|all|labelled] [--timing] [--quiet]\n"
            "                      [--maps-only] [--threads N]\n\n"
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
            "--report small (default): heatmap PNGs of the labelled heads only; every head's maps stay\n"
            "interactive on its page (examples past 64 tokens summarised to 8 bits: within 3.1%%).\n"
            "--report full: every map in fp16, a PNG per head and suite while heads x suites\n"
            "<= 1024 (the labelled heads' beyond). --report-maps N: PNGs of the first N examples of\n"
            "every head (0: none; all: every shown example; labelled: example 0 of the labelled heads).\n"
            "Each head page shows 2 examples per suite interactively (N if larger); the PNGs are their\n"
            "static, printable form (docs/report.md).\n"
            "--precision: on a GPU, matmuls in TF32 (default, fast; attention probabilities of trained\n"
            "models within ~4e-3 of fp32), tf32x3 (every layer matmul and attention as three TF32\n"
            "products of high and low parts: maps within ~3e-5 of fp32, ~2.2x the forward time; the\n"
            "LM head and per-head W_O terms stay TF32) or fp32 (exact to ~1e-6, the slowest); the CPU\n"
            "is always fp32.\n"
            "--threads N: the CPU engine's forwards on N threads (default: every core, fewer while the\n"
            "machine is loaded).\n",
            ANDREA_ABLATE_ITEMS_GPU, ANDREA_ABLATE_ITEMS_CPU);
}

/* The option parser: argv's options into the plan (rules: --rules' file). 0, -1 after --help,
 * or the usage-error code. */
static int parse_options(int argc, char **argv, andrea_analyze_plan *p, const char **rules) {
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'},       {"probes", required_argument, 0, 'p'},
        {"device", required_argument, 0, 'D'},    {"maps", required_argument, 0, 'm'},
        {"step", required_argument, 0, 'S'},      {"ablate-items", required_argument, 0, 'a'},
        {"ablation", required_argument, 0, 'A'},  {"threads", required_argument, 0, 'j'},
        {"rules", required_argument, 0, 'r'},     {"quiet", no_argument, 0, 'q'},
        {"precision", required_argument, 0, 'P'}, {"help", no_argument, 0, 'h'},
        {"n", required_argument, 0, 'n'},         {"len", required_argument, 0, 'l'},
        {"seed", required_argument, 0, 's'},      {"contrib", required_argument, 0, 'c'},
        {"tokenizer", required_argument, 0, 'k'}, {"dump", required_argument, 0, 'U'},
        {"keep-dumps", no_argument, 0, 'K'},      {"timing", no_argument, 0, 't'},
        {"report-maps", required_argument, 0, 'R'}, {"texts", required_argument, 0, 'T'},
        {"maps-only", no_argument, 0, 'M'},       {"report", required_argument, 0, 'F'},
        {0, 0, 0, 0},
    };
    int c, bad = 0; /* bad: a parser's usage-error exit code */
    long threads;
    optind = 1;
    opterr = 0;
    while (!bad && (c = cli_getopt(argc, argv, ":o:qh", opts)) != -1) {
        switch (c) {
        case 'o': p->dir = optarg; break;
        case 'p': bad = cli_opt_probes("analyze", optarg, p->ps); break;
        case 'T': bad = cli_opt_texts("analyze", optarg, p->ps); break;
        case 'M': p->maps_only = 1; break;
        case 'D': bad = cli_opt_device("analyze", optarg, &p->run.engine.device); break;
        case 'j': /* an engine setting: parsed here, read by the engine (engine/forward.h), nothing between */
            if (!(bad = cli_opt_long("analyze", "--threads", optarg, 1, 1024, "a number of threads", &threads)))
                p->run.engine.threads = (int)threads;
            break;
        case 'm': bad = cli_opt_maps("analyze", optarg, &p->run.maps_fp32); break;
        case 'S': bad = cli_opt_step("analyze", optarg, &p->classify); break;
        case 'a': bad = cli_opt_ablate_items("analyze", optarg, &p->classify); break;
        case 'A': bad = cli_opt_ablation("analyze", optarg, &p->classify); break;
        case 'r': *rules = optarg; break;
        case 'P': bad = cli_opt_precision("analyze", optarg, &p->run.engine); break;
        case 'n':
        case 'l':
        case 's': bad = cli_opt_probe("analyze", c, optarg, &p->po); break;
        case 'c': bad = cli_opt_contrib("analyze", optarg, &p->run.contrib); break;
        case 'k': p->tok_dir = optarg; break;
        case 'U': p->dump_file = optarg; break;
        case 'K': p->keep_dumps = 1; break;
        case 't': p->timing = 1; break;
        case 'R': bad = cli_opt_report_maps("analyze", optarg, &p->report_maps); break;
        case 'F': bad = cli_opt_report("analyze", optarg, &p->report_full); break;
        case 'q': andrea_progress_quiet = 1; break;
        case 'h': help(stdout); return -1;
        default: return cli_option_error("analyze", c, argv, opts);
        }
    }
    return bad;
}

/* The combinations of options and checkpoints that cannot be one run. 0 or the usage-error code. */
static int check_combination(const andrea_analyze_plan *p, int n_given) {
    struct stat st;
    if (p->classify.has_step && n_given > 1)
        return cli_usage_error("analyze", "--step names the step of ONE checkpoint; several were given");
    if (p->dump_file && n_given > 1)
        return cli_usage_error("analyze", "--dump FILE names the dump of ONE checkpoint; for several use --keep-dumps");
    if (p->dump_file && !p->dump_file[0]) return cli_usage_error("analyze", "--dump wants a file name, not ''");
    if (p->dump_file && p->keep_dumps)
        return cli_usage_error("analyze", "--dump FILE and --keep-dumps both name where the dump goes: give one");
    if (p->dump_file && stat(p->dump_file, &st) == 0 && S_ISDIR(st.st_mode)) /* before DIR is made */
        return cli_usage_error("analyze", "--dump names the dump file to write; '%s' is a folder", p->dump_file);
    if (!p->dir[0]) return cli_usage_error("analyze", "--out wants a folder name, not ''");
    return 0;
}

/* Makes DIR (*made: 1 when this run made it). 0, or the exit code after the message. */
static int make_out_dir(const char *dir, int *made) {
    ae_error err = {{0}};
    struct stat st;
    *made = mkdir(dir, 0777) == 0;
    if (!*made && errno != EEXIST) {
        andrea_fail(&err, "%s: cannot make the output folder: %s", dir, strerror(errno));
        return cli_fail(&err);
    }
    if (!*made && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        andrea_fail(&err, "%s: not a folder: --out names the folder of the report and catalog", dir);
        return cli_fail(&err);
    }
    return 0;
}

int cmd_analyze(int argc, char **argv) {
    static probe_sources ps; /* static: reachable until exit, whichever return ends the command */
    andrea_probe_sources_init(&ps);
    andrea_analyze_plan p;
    andrea_analyze_plan_init(&p);
    p.ps = &ps;
    p.printer = cli_analyze_printer();
    const char *rules = NULL;
    ae_error err = {{0}};
    int rc = parse_options(argc, argv, &p, &rules);
    if (rc) return rc < 0 ? cli_stdout_done() : rc;
    const int n_given = argc - optind;
    if ((rc = check_combination(&p, n_given))) return rc;
    if (rules && andrea_rules_load(&p.classify.rules, rules, &err)) return cli_fail(&err);
    p.rules_file = rules;
    char bundled[4096];
    const char *bundled_list[1] = {bundled};
    if (n_given <= 0 && cli_bundled_model_path(bundled, sizeof bundled, &err)) return cli_fail(&err);
    p.ckpts = n_given > 0 ? (const char *const *)argv + optind : bundled_list;
    p.n_ckpts = n_given > 0 ? n_given : 1;
    int made;
    if ((rc = make_out_dir(p.dir, &made))) return rc;
    rc = cli_analyze_check_paths(&p);
    if (!rc) rc = andrea_analyze(&p, &err) ? cli_fail(&err) : cli_stdout_done();
    andrea_probe_sources_free(p.ps);
    /* a run that failed before writing anything leaves no empty folder of its own making */
    if (rc != 0 && made) rmdir(p.dir);
    return rc;
}
