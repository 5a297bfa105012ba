/* cmd_classify.c — `andrea classify DUMP.h5 --db CATALOG`: analysis passes -> head catalog. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../catalog/catalog.h"
#include "../analyzer/classify.h"
#include "../analyzer/summary.h"
#include "../common/progress.h"
#include "../dump/dump.h"
#include "../pipeline/classify_run.h"
#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: andrea classify DUMP.h5 --db CATALOG [--rules FILE] [--min-score X] [--min-ratio X]\n"
            "                       [--min-margin X] [--step N] [--checkpoint PATH] [--no-causal] [--ablate-items N]\n"
            "                       [--ablation mean|resample|zero]\n"
            "                       [--device auto|cpu|cuda] [--precision tf32|tf32x3|fp32] [--timing] [--quiet]\n\n"
            "Scores every head on every suite of the dump (attention mass on the targets, against a\n"
            "uniform-causal baseline and a shuffled-target control), labels heads by the rules, runs\n"
            "the causal check (ablating heads on the first N items of each suite, default %d on a GPU,\n"
            "%d on the CPU; 0 = off; --ablation: how an ablated head's output is replaced, default mean)\n"
            "and stores one run in the SQLite catalog (created if missing). Definitions and default\n"
            "rules: docs/scores.md; schema: docs/catalog.md.\n"
            "  --rules FILE     JSON {\"class\": {\"min_score\": x, \"min_ratio\": x, \"min_margin\": x, \"min_extra\": x}, \"default\": {...}}\n"
            "  --min-score X    (and --min-ratio, --min-margin) override the rule of every class\n"
            "  --step N         training step of the checkpoint (else parsed from names like *_step1200.bin)\n"
            "  --checkpoint PATH  checkpoint for the causal check, or a folder to search for the file with the\n"
            "                   dump's sha256 (also --ckpt). Default: the path recorded in the dump, else a\n"
            "                   checkpoint beside the dump with that sha256; none found is an error\n"
            "  --no-causal      when no checkpoint is found, warn and classify without the causal check\n"
            "  -q, --quiet      no progress bar and no table: only the catalog line\n"
            "  --precision P    the causal check's matmuls on a GPU: tf32 (default, fast), tf32x3 or fp32\n"
            "  --timing         print where the time went (scoring, causal check, catalog)\n",
            ANDREA_ABLATE_ITEMS_GPU, ANDREA_ABLATE_ITEMS_CPU);
}

int cmd_classify(int argc, char **argv) {
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},         {"rules", required_argument, 0, 'r'},
        {"min-score", required_argument, 0, 's'},  {"min-ratio", required_argument, 0, 'R'},
        {"min-margin", required_argument, 0, 'M'}, {"step", required_argument, 0, 'S'},
        {"ckpt", required_argument, 0, 'c'},       {"ablate-items", required_argument, 0, 'a'},
        {"ablation", required_argument, 0, 'A'},
        {"device", required_argument, 0, 'D'},     {"quiet", no_argument, 0, 'q'},
        {"precision", required_argument, 0, 'P'},  {"help", no_argument, 0, 'h'},
        {"checkpoint", required_argument, 0, 'c'}, {"no-causal", no_argument, 0, 'N'},
        {"timing", no_argument, 0, 't'},           {0, 0, 0, 0},
    };
    const char *db = NULL, *rules = NULL;
    andrea_classify_options o;
    andrea_classify_options_init(&o);
    ae_error err = {{0}};
    int c, bad, timing = 0; /* bad: a parser's usage-error exit code */
    andrea_classify_timing ct = {0};
    o.timing = &ct;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":qh", opts)) != -1) {
        double v;
        switch (c) {
        case 'd': db = optarg; break;
        case 'r': rules = optarg; break;
        case 's':
            if (cli_parse_double(optarg, &v)) return cli_usage_error("classify", "--min-score wants a number, not '%s'", optarg);
            o.rules.flags.has_min_score = 1, o.rules.flags.r.min_score = v;
            break;
        case 'R':
            if (cli_parse_double(optarg, &v)) return cli_usage_error("classify", "--min-ratio wants a number, not '%s'", optarg);
            o.rules.flags.has_min_ratio = 1, o.rules.flags.r.min_ratio = v;
            break;
        case 'M':
            if (cli_parse_double(optarg, &v)) return cli_usage_error("classify", "--min-margin wants a number, not '%s'", optarg);
            o.rules.flags.has_min_margin = 1, o.rules.flags.r.min_margin = v;
            break;
        case 'S':
            if ((bad = cli_opt_step("classify", optarg, &o))) return bad;
            break;
        case 'c': o.ckpt = optarg; break;
        case 'a':
            if ((bad = cli_opt_ablate_items("classify", optarg, &o))) return bad;
            break;
        case 'A':
            if ((bad = cli_opt_ablation("classify", optarg, &o))) return bad;
            break;
        case 'D':
            if ((bad = cli_opt_device("classify", optarg, &o.engine.device))) return bad;
            break;
        case 'P':
            if ((bad = cli_opt_precision("classify", optarg, &o.engine))) return bad;
            break;
        case 'q': andrea_progress_quiet = 1; break;
        case 'N': o.no_causal = 1; break;
        case 't': timing = 1; break;
        case 'h': help(stdout); return cli_stdout_done();
        default: return cli_option_error("classify", c, argv, opts);
        }
    }
    if (optind + 1 != argc) return cli_usage_error("classify", "wants exactly one DUMP.h5");
    if (!db) return cli_usage_error("classify", "--db CATALOG is required");
    if (rules && andrea_rules_load(&o.rules, rules, &err)) return cli_fail(&err);
    const double t0 = andrea_now_seconds();
    andrea_classify_result r;
    if (andrea_classify_run(argv[optind], db, &o, &r, &err)) return cli_fail(&err);
    andrea_analysis *a = &r.analysis;
    if (!r.prints) { /* MPI: rank 0 prints the job's result */
        andrea_analysis_free(a);
        return 0;
    }
    if (!andrea_progress_quiet) andrea_summary_write(stdout, a);
    char s_db[4200];
    printf("catalog: %s (run %lld)\n", andrea_shown(db, s_db, sizeof s_db), (long long)r.run_id);
    if (timing) {
        const double t_end = andrea_now_seconds();
        fprintf(stderr, "andrea classify: time: scoring (maps read from the dump) %.2f s, causal check %.2f s (clean forwards "
                        "%.2f s, replacement outputs %.2f s, direct effects %.2f s, %ld ablated sets in %ld forwards %.2f s), "
                        "catalog %.2f s, total %.2f s\n", ct.t_scoring, ct.t_causal, ct.causal.t_clean, ct.causal.t_values,
                ct.causal.t_direct, ct.causal.units, ct.causal.forwards, ct.causal.t_ablated, t_end - r.t_scored, t_end - t0);
    }
    andrea_analysis_free(a);
    return cli_stdout_done();
}
