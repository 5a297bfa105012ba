/* cmd_render.c — `andrea render DUMP.h5 --db CATALOG --out DIR`: heatmap PNGs + index.html. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/progress.h"
#include "../catalog/sqlite_time_limit.h"
#include "../dump/dump.h"
#include "../reports/report.h"
#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: andrea render DUMP.h5 --db CATALOG --out DIR [--examples N] [--report-maps N|all|labelled]\n"
            "                     [--report small|full] [--timeout S] [--quiet]\n\n"
            "Writes a static, offline report of the dump's model into DIR (created if missing):\n"
            "index.html (a sortable head table filterable by class, overview images), one page per\n"
            "head (heads/L{l}_H{h}.html) with its heatmaps for every suite, and the PNGs (maps/,\n"
            "overview/). Scores, labels and ablations come from the catalog (read-only): the run that\n"
            "scored this dump (matched by its seal), else the current run of each class (docs/catalog.md).\n"
            "Layout and images: docs/report.md.\n"
            "  --examples N   examples shown per head and suite (interactive maps; default 2; 1..1000)\n"
            "  --report small|full  small (default): heatmap PNGs of the labelled heads only,\n"
            "                 interactive maps past 64 tokens summarised to 8 bits (within 3.1%%); full:\n"
            "                 every map in fp16, a PNG per head and suite while heads x suites <= 1024\n"
            "                 (the labelled heads' beyond)\n"
            "  --report-maps N|all|labelled  heatmap PNGs of every head: the first N shown examples\n"
            "                 (0: none; all: every shown example; labelled: example 0 of the labelled\n"
            "                 heads; N > --examples shows N)\n"
            "  --timeout S    stop a catalog query after S seconds in it (default %g; 0: no limit)\n"
            "  -q, --quiet    no progress bar (-o is --out, -h --help)\n",
            CATALOG_TIMEOUT_DEFAULT_S);
}

int cmd_render(int argc, char **argv) {
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},  {"out", required_argument, 0, 'o'}, {"examples", required_argument, 0, 'n'},
        {"report-maps", required_argument, 0, 'R'}, {"timeout", required_argument, 0, 't'},
        {"quiet", no_argument, 0, 'q'},     {"help", no_argument, 0, 'h'},       {"report", required_argument, 0, 'F'},
        {0, 0, 0, 0},
    };
    const char *db = NULL, *out = NULL;
    andrea_render_options o = {0};
    ae_error err = {{0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":o:qh", opts)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'o': out = optarg; break;
        case 'n': {
            long n;
            const int bad = cli_opt_long("render", "--examples", optarg, 1, 1000, "1..1000", &n);
            if (bad) return bad;
            o.examples_per_suite = (int)n;
            break;
        }
        case 'R': {
            int bad = cli_opt_report_maps("render", optarg, &o.maps_per_suite);
            if (bad) return bad;
            break;
        }
        case 'F': {
            int bad = cli_opt_report("render", optarg, &o.full);
            if (bad) return bad;
            break;
        }
        case 't': { /* every catalog connection of this run gets it (catalog/sqlite_time_limit.h) */
            catalog_limits lim;
            int bad = cli_opt_timeout("render", optarg, &lim);
            if (bad) return bad;
            andrea_sqlite_time_limit_set_default(lim.timeout_s);
            break;
        }
        case 'q':
            o.quiet = 1;
            andrea_progress_quiet = 1;
            break;
        case 'h': help(stdout); return cli_stdout_done();
        default: return cli_option_error("render", c, argv, opts);
        }
    }
    if (optind + 1 != argc) return cli_usage_error("render", "wants exactly one DUMP.h5");
    if (!db) return cli_usage_error("render", "--db CATALOG is required");
    if (!out) return cli_usage_error("render", "--out DIR is required");
    /* as in classify: HDF5 reads a user's dump only after a sacrificial child read all of it */
    if (andrea_dump_check_isolated(argv[optind], &err)) return cli_fail(&err);
    if (andrea_render(argv[optind], db, out, &o, &err)) return cli_fail(&err);
    char s_out[4200];
    printf("report: %s/index.html\n", andrea_shown(out, s_out, sizeof s_out));
    return cli_stdout_done();
}
